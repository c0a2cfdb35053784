/**
 * A publisher's nodes are paged along nodes_publisher (publisher id, then node id, each one's status beside it): a
 * page reads its offset and limit of index entries and sorts nothing, and the count reads no table row, where the
 * index of publisher ids alone made every page sort all of that publisher's nodes (0.1-0.3 s at 20,000).
 */
import { afterEach, expect, test } from 'bun:test'
import { listNodesOfPublisher, pageNodeIdsOfPublisher } from '../../src/store/nodes'
import { openStore, type Store } from '../../src/store/db'
import { plansOf } from '../support/query-plans'

let db: Store
afterEach(() => db?.destroy())

test("a publisher's node pages and their count walk nodes_publisher and sort nothing", async () => {
  db = await openStore(':memory:')
  for (const includeBanned of [false, true]) {
    const page = { includeBanned, offset: 15_000, limit: 50 }
    const [count, ids] = (await plansOf(db, (db) => pageNodeIdsOfPublisher(db, 'bigpub', page))).map((q) => q.plan)
    expect(count).toBe('SEARCH nodes USING COVERING INDEX nodes_publisher (publisher_id=?)')
    expect(ids).toBe('SEARCH nodes USING COVERING INDEX nodes_publisher (publisher_id=?)')
    const [rows] = (await plansOf(db, (db) => listNodesOfPublisher(db, 'bigpub', page))).map((q) => q.plan)
    // Each row's count from its narrow row (schema 17), by its key.
    expect(rows).toBe(
      'SEARCH nodes USING INDEX nodes_publisher (publisher_id=?) | ' +
        'SEARCH node_downloads USING INDEX sqlite_autoindex_node_downloads_1 (node_id=?) LEFT-JOIN',
    )
  }
})
