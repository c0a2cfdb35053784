/** The NodeSearch engine that asks the store directly: always correct, no warm-up; the index's fallback. */
import type { Store } from '../store/db'
import { findHostNodeOwner, queryNodeIds } from '../store/node-query'
import type { NodeSearch } from './node-search'

export function createStoreSearch(db: Store): NodeSearch {
  return {
    find: (q) => queryNodeIds(db, q),
    hostNodeOwner: (name) => findHostNodeOwner(db, name),
    nodesChanged: async () => {},
    countsChanged: async () => {},
    publishersChanged: async () => {},
    status: () => ({ ready: false, indexed: 0, engine: 'store' }),
    // Answers come from the store each time: nothing computed here goes stale.
    generation: () => 0,
  }
}
