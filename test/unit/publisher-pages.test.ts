/**
 * A publisher's nodes are paged along nodes_publisher (publisher id, then node id, each one's status beside it): a
 * page reads its offset and limit of index entries and sorts nothing, and the count reads no table row, where the
 * index of publisher ids alone made every page sort all of that publisher's nodes (0.1-0.3 s at 20,000).
 */
import { afterEach, expect, test } from 'bun:test'
import { CompiledQuery } from 'kysely'
import { listNodesOfPublisher, pageNodeIdsOfPublisher } from '../../src/store/nodes'
import { openStore, type Store } from '../../src/store/db'

let db: Store
afterEach(() => db?.destroy())

/** The query plan of each statement `read` runs against the store. */
async function plansOf(read: (db: Store) => Promise<unknown>): Promise<string[]> {
  const compiled: CompiledQuery[] = []
  const watching = db.withPlugin({
    transformQuery(args) {
      compiled.push(db.getExecutor().compileQuery(args.node, args.queryId))
      return args.node
    },
    transformResult: async (args) => args.result,
  })
  await read(watching)
  const plans = []
  for (const q of compiled) {
    const rows = (await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]))).rows
    plans.push(rows.map((r) => r.detail).join(' | '))
  }
  return plans
}

test("a publisher's node pages and their count walk nodes_publisher and sort nothing", async () => {
  db = await openStore(':memory:')
  for (const includeBanned of [false, true]) {
    const page = { includeBanned, offset: 15_000, limit: 50 }
    const [count, ids] = await plansOf((db) => pageNodeIdsOfPublisher(db, 'bigpub', page))
    expect(count).toBe('SEARCH nodes USING COVERING INDEX nodes_publisher (publisher_id=?)')
    expect(ids).toBe('SEARCH nodes USING COVERING INDEX nodes_publisher (publisher_id=?)')
    const [rows] = await plansOf((db) => listNodesOfPublisher(db, 'bigpub', page))
    expect(rows).toBe('SEARCH nodes USING INDEX nodes_publisher (publisher_id=?)')
  }
})
