/**
 * Install answers remembered per (node, version asked) until anything about that node changes, so that an
 * install reads nothing from the store once its answer is known; every install is still counted. Only answers
 * anyone may have are kept (an active version); a flagged version is resolved for each caller.
 */
import { VERSION_STATUS, type VersionJson } from '../domain/wire'
import type { Actor } from './access'
import type { Deps } from './deps'
import { createNodeMemo } from './node-memo'
import { countInstall, installNode } from './nodes'

export const INSTALL_LOOKUP_MAX_BYTES = 4 * 1024 * 1024

export type InstallLookup = (actor: Actor, nodeId: string, version?: string) => Promise<VersionJson>

export function createInstallLookup(deps: Deps, maxBytes = INSTALL_LOOKUP_MAX_BYTES): InstallLookup {
  const memo = createNodeMemo<VersionJson>(deps.nodeJson, maxBytes, 2048)
  return async (actor, nodeId, version) => {
    const key = `${nodeId}\n${version ?? ''}`
    const hit = memo.get(key)
    if (hit) {
      countInstall(deps, hit.node_id)
      return hit
    }
    const started = memo.start()
    const answer = await installNode(deps, actor, nodeId, version)
    if (answer.status === VERSION_STATUS.active) memo.set(key, answer.node_id, started, answer)
    return answer
  }
}
