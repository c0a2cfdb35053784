/**
 * Which archive a download URL names, remembered (node, version and archive rows and the opened blob) until
 * anything about that node changes, so that downloading a popular archive reads nothing from the store. Only
 * archives anyone may download are kept (an active version of an active node): a flagged one depends on the
 * caller, and is looked up each time.
 */
import type { Actor } from './access'
import { openArchive, type OpenedArchive } from './archives'
import type { Deps } from './deps'
import { createNodeMemo } from './node-memo'

export const ARCHIVE_LOOKUP_MAX_BYTES = 4 * 1024 * 1024

export type ArchiveLookup = (actor: Actor, nodeId: string, version: string) => Promise<OpenedArchive>

export function createArchiveLookup(deps: Deps, maxBytes = ARCHIVE_LOOKUP_MAX_BYTES): ArchiveLookup {
  // Two rows and a Blob handle: about 2 KB each.
  const memo = createNodeMemo<OpenedArchive>(deps.nodeJson, maxBytes, 2048)
  return async (actor, nodeId, version) => {
    const key = `${nodeId}\n${version}`
    const hit = memo.get(key)
    if (hit) return hit
    const started = memo.start()
    const opened = await openArchive(deps, actor, nodeId, version)
    if (opened.node.status === 'active' && opened.versionRow.status === 'active') memo.set(key, opened.node.id, started, opened)
    return opened
  }
}
