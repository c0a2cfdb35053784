/**
 * Versions across nodes are paged along node_versions_created (newest first, each one's status and node beside it):
 * a page reads its offset and limit of index entries and sorts nothing, where the status index made every page sort
 * all matching versions (5 s at the millionth). Rare statuses alone still read the status index.
 */
import { afterEach, expect, test } from 'bun:test'
import { CompiledQuery } from 'kysely'
import { pageVersions } from '../../src/store/versions'
import { openStore, type Store } from '../../src/store/db'

let db: Store
afterEach(() => db?.destroy())

/** The query plans of the page statements (ordered newest first) that pageVersions runs across nodes. */
async function plansOf(statuses: ('active' | 'pending' | 'flagged')[]): Promise<string[]> {
  const compiled: CompiledQuery[] = []
  const watching = db.withPlugin({
    transformQuery(args) {
      compiled.push(db.getExecutor().compileQuery(args.node, args.queryId))
      return args.node
    },
    transformResult: async (args) => args.result,
  })
  await pageVersions(watching, { statuses, includeBannedNodes: false, offset: 0, limit: 10 })
  const pages = compiled.filter((q) => /order by "created_at" desc/.test(q.sql))
  const plans = []
  for (const q of pages) {
    const rows = (await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]))).rows
    plans.push(rows.map((r) => r.detail).join(' | '))
  }
  return plans
}

test('a page across nodes walks node_versions_created and sorts nothing; rare statuses read the status index', async () => {
  db = await openStore(':memory:')
  const [across] = await plansOf(['active', 'pending', 'flagged'])
  expect(across).toContain('COVERING INDEX node_versions_created')
  expect(across).not.toContain('TEMP B-TREE')
  const [queue] = await plansOf(['flagged', 'pending'])
  expect(queue).toContain('node_versions_status_created')
})
