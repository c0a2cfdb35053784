/** Rendered node JSON (with publisher and latest_version), cached per node and dropped on every change to it. */
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

export function createNodeJsonCache(db: Store, publicUrl: string): NodeJsonCache {
  const cache = new Map<string, string>()
  let generation = 0
  return {
    get generation() {
      return generation
    },
    async render(ids) {
      const missing = ids.filter((id) => !cache.has(id))
      if (missing.length) {
        const rows = await listNodesByIds(db, missing)
        const rendered = await renderNodes(db, rows, { publicUrl })
        if (cache.size + rendered.length > MAX_ENTRIES) cache.clear()
        for (const node of rendered) cache.set(node.id, JSON.stringify(node))
      }
      return ids.flatMap((id) => cache.get(id) ?? [])
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
