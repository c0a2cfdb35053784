/** Rendered node JSON (with publisher and latest_version), cached per node and dropped on every change to it. */
import type { CacheCounter } from '../metrics'
import type { Store } from '../store/db'
import { listNodesByIds } from '../store/nodes'
import { renderNodes } from './views'

const MAX_ENTRIES = 50_000

export interface NodeJsonCache {
  /** Counts changes to any node or publisher; whatever was rendered before a change may be stale after it. */
  readonly generation: number
  /** The JSON text of each node, in the order given; unknown ids are left out. */
  render(ids: readonly string[]): Promise<string[]>
  nodesChanged(ids: readonly string[]): void
  /** Publisher names and members show inside every node of theirs. */
  publishersChanged(): void
}

const uncounted: CacheCounter = { hit: () => {}, miss: () => {} }

export function createNodeJsonCache(db: Store, publicUrl: string, counter: CacheCounter = uncounted): NodeJsonCache {
  const cache = new Map<string, string>()
  let generation = 0
  return {
    get generation() {
      return generation
    },
    async render(ids) {
      const missing = ids.filter((id) => !cache.has(id))
      counter.hit(ids.length - missing.length)
      counter.miss(missing.length)
      if (!missing.length) return ids.map((id) => cache.get(id)!)
      const started = generation
      const rows = await listNodesByIds(db, missing)
      const fresh = new Map((await renderNodes(db, rows, { publicUrl })).map((node) => [node.id, JSON.stringify(node)]))
      // Rows read before a change that landed meanwhile must not be kept as current.
      if (started === generation) {
        if (cache.size + fresh.size > MAX_ENTRIES) cache.clear()
        for (const [id, json] of fresh) cache.set(id, json)
      }
      return ids.flatMap((id) => fresh.get(id) ?? cache.get(id) ?? [])
    },
    nodesChanged(ids) {
      generation++
      for (const id of ids) cache.delete(id)
    },
    publishersChanged() {
      generation++
      cache.clear()
    },
  }
}
