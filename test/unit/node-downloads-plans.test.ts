/**
 * The list order lives beside the counts (schema 17): a page of the SQL search without a keyword walks the narrow
 * rows' index node_downloads_order and stops at its limit, sorting nothing; a count's feed entries are listed from the
 * index of count serials, not from a scan of the narrow rows.
 */
import { afterEach, expect, test } from 'bun:test'
import { listChanges } from '../../src/store/changes'
import { openStore, type Store } from '../../src/store/db'
import { queryNodeIds } from '../../src/store/node-query'
import { plansOf } from '../support/query-plans'

let db: Store
afterEach(() => db?.destroy())

test('a page of the list order walks node_downloads_order and sorts nothing', async () => {
  db = await openStore(':memory:')
  const plans = (await plansOf(db, (db) => queryNodeIds(db, { offset: 100, limit: 30, includeBanned: false }))).map((q) => q.plan)
  const page = plans.find((p) => p.includes('node_downloads_order'))
  expect(page).toBeDefined()
  expect(page).not.toContain('TEMP B-TREE')
})

test("a keyword's page scans the texts once: each match's count is looked up, not joined", async () => {
  db = await openStore(':memory:')
  const plans = (await plansOf(db, (db) => queryNodeIds(db, { offset: 0, limit: 30, includeBanned: false, search: 'upscale' }))).map(
    (q) => q.plan,
  )
  // Joined, SQLite scanned every node's texts a second time after the join (77 -> 112 ms a page at 100,000 nodes).
  expect(plans.map((p) => p.split('SCAN node_search_keywords').length - 1)).toEqual([1])
})

test('the feed reads changes and counts each along its serials, a page of each at most', async () => {
  db = await openStore(':memory:')
  const [plan] = (await plansOf(db, (db) => listChanges(db, 100, 50))).map((q) => q.plan)
  expect(plan).toContain('SEARCH c USING INTEGER PRIMARY KEY (rowid>?)')
  expect(plan).toContain('SEARCH d USING INDEX node_downloads_serial (serial>?)')
  expect(plan).not.toMatch(/SCAN [cd]( |$)/)
})
