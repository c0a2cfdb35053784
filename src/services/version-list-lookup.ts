/**
 * Version lists (GET /nodes/{id}/versions) remembered per (node, statuses, reasons shown) as the JSON text sent,
 * until anything about that node or its versions changes: a list reads every version row of its node and sorts them
 * (some 450 µs of a server's CPU at the real registry's size, against 110 for an install answered from memory). The
 * answer is the same for every caller (a banned node's list is refused to all, and never remembered).
 */
import type { VersionStatus } from '../store/schema'
import type { Deps } from './deps'
import { createNodeMemo } from './node-memo'
import { listNodeVersions } from './nodes'

export const VERSION_LISTS_MAX_BYTES = 4 * 1024 * 1024

/** What an entry costs beside its key and its text: the map entry, the entry and answer objects. */
const ENTRY_BYTES = 128

export type VersionListLookup = (nodeId: string, opts: { statuses?: VersionStatus[]; includeReason: boolean }) => Promise<string>

export function createVersionListLookup(deps: Deps, maxBytes = VERSION_LISTS_MAX_BYTES): VersionListLookup {
  const memo = createNodeMemo<{ text: string }>(deps.nodeJson, maxBytes, ENTRY_BYTES, (answer) => answer.text.length)
  return async (nodeId, opts) => {
    const key = `${nodeId}\n${opts.statuses?.join(',') ?? ''}\n${opts.includeReason ? 1 : 0}`
    const hit = memo.get(key)
    if (hit) return hit.text
    const started = memo.start()
    const { node, versions } = await listNodeVersions(deps, nodeId, opts)
    const answer = { text: JSON.stringify(versions) }
    memo.set(key, node.id, started, answer)
    return answer.text
  }
}
