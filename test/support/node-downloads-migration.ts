/**
 * Schema 17's step on a store at version 16 (either dialect): the counts move into the nodes' narrow rows with a copy
 * of their ranking, every reader of a count gets the numbers it got before, and the feed goes on from there: a count
 * is fed from the narrow row, and each node is listed once, at its newest change.
 */
import { expect } from 'bun:test'
import { sql, type Kysely } from 'kysely'
import { appendChanges, listChanges } from '../../src/store/changes'
import type { Store } from '../../src/store/db'
import { writeDownloadCounts } from '../../src/store/download-counts'
import { queryNodeIds } from '../../src/store/node-query'
import { findNode, listNodesByIds, readDownloads } from '../../src/store/nodes'
import { loadSearchDocs } from '../../src/store/search-docs'

const NOW = '2026-01-01T00:00:00.000Z'
const LATER = '2026-01-02T00:00:00.000Z'

/** Rows a version-16 store may hold: counted nodes, one ranked above the rest, a banned one; each in the feed. */
export async function insertVersion16Nodes(db: Kysely<any>): Promise<void> {
  await sql`insert into publishers (id, name, created_at, updated_at) values ('acme', 'Acme', ${NOW}, ${NOW})`.execute(db)
  await sql`insert into nodes (id, normalized_id, publisher_id, name, search_ranking, downloads, status, created_at, updated_at)
    values ('Alpha', 'alpha', 'acme', 'Alpha', 0, 5, 'active', ${NOW}, ${NOW}),
      ('Beta', 'beta', 'acme', 'Beta', 2, 1, 'active', ${NOW}, ${NOW}),
      ('Gamma', 'gamma', 'acme', 'Gamma', 0, 9, 'active', ${NOW}, ${NOW}),
      ('Delta', 'delta', 'acme', 'Delta', 0, 0, 'banned', ${NOW}, ${NOW})`.execute(db)
  await sql`insert into changes (serial, kind, entity_id, changed_at) values (1, 'publisher', 'acme', ${NOW}),
    (2, 'node', 'Alpha', ${NOW}), (3, 'node', 'Beta', ${NOW}), (4, 'node', 'Gamma', ${NOW}), (5, 'node', 'Delta', ${NOW})`.execute(db)
  await sql`update registry_instance set last_serial = 5`.execute(db)
}

const fed = async (db: Store, since: number) => (await listChanges(db, since, 100)).map((c) => [c.serial, c.kind, c.entity_id])

/** What the step must leave, checked on the migrated store. */
export async function expectCountsOfVersion16Nodes(db: Store): Promise<void> {
  const narrow = await db.selectFrom('node_downloads').selectAll().orderBy('node_id').execute()
  expect(narrow.map((r) => ({ ...r, serial: r.serial ?? null, changed_at: r.changed_at ?? null }))).toEqual([
    { node_id: 'Alpha', search_ranking: 0, downloads: 5, serial: null, changed_at: null },
    { node_id: 'Beta', search_ranking: 2, downloads: 1, serial: null, changed_at: null },
    { node_id: 'Delta', search_ranking: 0, downloads: 0, serial: null, changed_at: null },
    { node_id: 'Gamma', search_ranking: 0, downloads: 9, serial: null, changed_at: null },
  ])
  // The count is no longer a column of the wide row (a count would rewrite it).
  const row = await sql<Record<string, unknown>>`select * from nodes where id = 'Alpha'`.execute(db)
  expect(Object.keys(row.rows[0]!)).not.toContain('downloads')

  // Every reader of a count: node rows, counts alone, the index's documents, the SQL list order.
  expect((await findNode(db, 'gamma'))!.downloads).toBe(9)
  expect((await listNodesByIds(db, ['Alpha', 'Beta'])).map((n) => [n.id, n.downloads]).sort()).toEqual([
    ['Alpha', 5],
    ['Beta', 1],
  ])
  expect([...(await readDownloads(db, ['Alpha', 'Gamma']))].sort()).toEqual([
    ['Alpha', 5],
    ['Gamma', 9],
  ])
  expect((await loadSearchDocs(db, ['Gamma'])).map((d) => [d.searchRanking, d.downloads])).toEqual([[0, 9]])
  const page = (q: object = {}) => queryNodeIds(db, { offset: 0, limit: 10, includeBanned: false, ...q })
  expect(await page()).toEqual({ ids: ['Beta', 'Gamma', 'Alpha'], total: 3 })
  expect((await page({ search: 'a' })).ids).toEqual(['Beta', 'Gamma', 'Alpha'])

  // The feed as it was; then a count is fed from the narrow row, each node once at its newest change.
  expect(await fed(db, 0)).toEqual([
    [1, 'publisher', 'acme'],
    [2, 'node', 'Alpha'],
    [3, 'node', 'Beta'],
    [4, 'node', 'Gamma'],
    [5, 'node', 'Delta'],
  ])
  const written = await writeDownloadCounts(
    db,
    new Map([
      ['Alpha', 2],
      ['Gone', 1],
    ]),
    LATER,
  )
  expect([...written.totals]).toEqual([['Alpha', 7]])
  expect(written.serials).toEqual({ first: 6, last: 7 })
  expect(await fed(db, 0)).toEqual([
    [1, 'publisher', 'acme'],
    [3, 'node', 'Beta'],
    [4, 'node', 'Gamma'],
    [5, 'node', 'Delta'],
    [6, 'node', 'Alpha'],
  ])
  expect((await listChanges(db, 5, 100)).map((c) => c.changed_at)).toEqual([LATER])
  // The counted order moved with it; a later change of the node is listed instead of its count.
  expect((await page()).ids).toEqual(['Beta', 'Gamma', 'Alpha'])
  await writeDownloadCounts(db, new Map([['Alpha', 3]]), LATER)
  expect((await page()).ids).toEqual(['Beta', 'Alpha', 'Gamma'])
  await appendChanges(db, [{ kind: 'node', id: 'Alpha' }], LATER)
  expect(await fed(db, 5)).toEqual([[9, 'node', 'Alpha']])
  expect(await fed(db, 0)).toHaveLength(5)
}
