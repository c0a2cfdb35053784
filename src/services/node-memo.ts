/**
 * Answers remembered per key until anything about their node changes (download counts aside), bounded by
 * bytes (src/bounded-cache.ts: oldest out first, and once nearly full only keys asked for lately). The node
 * JSON cache's change sequence says what changed: every write reports its nodes there (commitWrite), so nothing
 * else needs to be told.
 */
import { BoundedCache } from '../bounded-cache'
import type { NodeJsonCache } from './node-json'

export interface NodeMemo<T> {
  /** The value remembered for `key`, unless its node changed since. */
  get(key: string): T | undefined
  /** Where a lookup starts: pass it to set(), so that rows read before a change are not kept. */
  start(): number
  set(key: string, nodeId: string, started: number, value: T): void
}

/**
 * `entryBytes`: what an entry costs beside its key (the map entry, the entry object, the value's own fields);
 * `valueBytes`, for values whose size varies: what the value holds besides (the text of a rendered answer).
 */
export function createNodeMemo<T>(
  changes: Pick<NodeJsonCache, 'sequence' | 'contentChangedAfter'>,
  maxBytes: number,
  entryBytes: number,
  valueBytes: (value: T) => number = () => 0,
): NodeMemo<T> {
  const cache = new BoundedCache<{ nodeId: string; sequence: number; value: T }>(maxBytes)
  return {
    get(key) {
      const hit = cache.get(key)
      if (!hit) return undefined
      if (!changes.contentChangedAfter(hit.nodeId, hit.sequence)) return hit.value
      cache.delete(key)
      return undefined
    },
    start: () => changes.sequence,
    set(key, nodeId, started, value) {
      if (changes.contentChangedAfter(nodeId, started) || !cache.admits(key)) return
      cache.set(key, { nodeId, sequence: started, value }, 2 * key.length + entryBytes + valueBytes(value))
    },
  }
}
