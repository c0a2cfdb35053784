/**
 * Versions across nodes are paged along node_versions_created (newest first, each one's status and node beside it):
 * a page reads its offset and limit of index entries and sorts nothing, where the status index made every page sort
 * all matching versions (5 s at the millionth). Rare statuses alone still read the status index.
 */
import { afterEach, expect, test } from 'bun:test'
import { pageVersions } from '../../src/store/versions'
import { openStore, type Store } from '../../src/store/db'
import { plansOf } from '../support/query-plans'

let db: Store
afterEach(() => db?.destroy())

/** The query plans of the page statements (ordered newest first) that pageVersions runs across nodes. */
async function pagePlansOf(statuses: ('active' | 'pending' | 'flagged')[]): Promise<string[]> {
  const sent = await plansOf(db, (db) => pageVersions(db, { statuses, includeBannedNodes: false, offset: 0, limit: 10 }))
  return sent.filter((q) => /order by "created_at" desc/.test(q.sql)).map((q) => q.plan)
}

test('a page across nodes walks node_versions_created and sorts nothing; rare statuses read the status index', async () => {
  db = await openStore(':memory:')
  const [across] = await pagePlansOf(['active', 'pending', 'flagged'])
  expect(across).toContain('COVERING INDEX node_versions_created')
  expect(across).not.toContain('TEMP B-TREE')
  const [queue] = await pagePlansOf(['flagged', 'pending'])
  expect(queue).toContain('node_versions_status_created')
})
