/**
 * Install answers remembered per (node, version asked) as the JSON text sent, until anything about that node
 * changes, so that an install reads nothing from the store and renders nothing once its answer is known; every
 * install is still counted. Only answers anyone may have are kept (an active version); a flagged version is
 * resolved for each caller.
 */
import { VERSION_STATUS } from '../domain/wire'
import type { Actor } from './access'
import type { Deps } from './deps'
import { createNodeMemo } from './node-memo'
import { countInstall, installNode } from './nodes'

export const INSTALL_LOOKUP_MAX_BYTES = 4 * 1024 * 1024

/**
 * What an entry costs beside its key and its text (counted as its length: the answer's JSON is ASCII but for the
 * rare changelog or id): the map entry, the entry and answer objects, the node id shared with the index.
 * About 750 bytes in all for an answer of the real registry, so 4 MiB holds every node of its 2,200 several times.
 */
const ENTRY_BYTES = 128

interface KnownAnswer {
  /** The node as stored (the id counted), whatever case the request used. */
  nodeId: string
  text: string
}

/** The install answer (a NodeVersion with its downloadUrl) as JSON text; `count: false` for a HEAD (it downloads nothing). */
export type InstallLookup = (actor: Actor, nodeId: string, version?: string, opts?: { count?: boolean }) => Promise<string>

export function createInstallLookup(deps: Deps, maxBytes = INSTALL_LOOKUP_MAX_BYTES): InstallLookup {
  const memo = createNodeMemo<KnownAnswer>(deps.nodeJson, maxBytes, ENTRY_BYTES, (answer) => answer.text.length)
  return async (actor, nodeId, version, opts = {}) => {
    const key = `${nodeId}\n${version ?? ''}`
    const hit = memo.get(key)
    if (hit) {
      if (opts.count !== false) countInstall(deps, hit.nodeId)
      return hit.text
    }
    const started = memo.start()
    const answer = await installNode(deps, actor, nodeId, version, opts)
    const known = { nodeId: answer.node_id, text: JSON.stringify(answer) }
    if (answer.status === VERSION_STATUS.active) memo.set(key, answer.node_id, started, known)
    return known.text
  }
}
