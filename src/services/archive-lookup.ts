/**
 * Which archive a download URL names, remembered: the node, version and archive rows and the opened blob, kept
 * until anything about that node changes (its versions and statuses included; download counts excepted), so
 * that a download of a popular archive reads nothing from the store. Only archives anyone may download are
 * kept (an active version of an active node): flagged ones depend on the caller, and are looked up each time.
 */
import type { Actor } from './access'
import { openArchive, type OpenedArchive } from './archives'
import type { Deps } from './deps'

export const ARCHIVE_LOOKUP_MAX_BYTES = 4 * 1024 * 1024
/** What one remembered lookup costs beside its key (rows, the Blob handle, map entry). */
const ENTRY_BYTES = 512

interface Entry {
  nodeId: string
  sequence: number
  archive: OpenedArchive
}

export type ArchiveLookup = (actor: Actor, nodeId: string, version: string) => Promise<OpenedArchive>

export function createArchiveLookup(deps: Deps, maxBytes = ARCHIVE_LOOKUP_MAX_BYTES): ArchiveLookup {
  const cache = new Map<string, Entry>()
  let bytes = 0
  const cost = (key: string) => key.length + ENTRY_BYTES
  const drop = (key: string) => {
    if (cache.delete(key)) bytes -= cost(key)
  }
  return async (actor, nodeId, version) => {
    const key = `${nodeId}\n${version}`
    const hit = cache.get(key)
    if (hit && !deps.nodeJson.contentChangedAfter(hit.nodeId, hit.sequence)) return hit.archive
    if (hit) drop(key)
    const sequence = deps.nodeJson.sequence
    const opened = await openArchive(deps, actor, nodeId, version)
    // Kept when anyone may download it, and only if no change to the node landed while its rows were read.
    if (
      opened.node.status === 'active' &&
      opened.versionRow.status === 'active' &&
      !deps.nodeJson.contentChangedAfter(opened.node.id, sequence)
    ) {
      for (const [oldest] of cache) {
        if (bytes + cost(key) <= maxBytes) break
        drop(oldest)
      }
      cache.set(key, { nodeId: opened.node.id, sequence, archive: opened })
      bytes += cost(key)
    }
    return opened
  }
}
