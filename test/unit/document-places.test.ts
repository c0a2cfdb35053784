/**
 * A node's document read again from where it was found (its row number, its archive answer then) while the node has
 * not changed: without the archive question and the walk of the id's index, and never another node's document in
 * its place. (That a change of the node forgets the place is held by the tests of what changes show: archive modes,
 * refused archives, cache consistency.)
 */
import { afterEach, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { createNodeJsonCache } from '../../src/services/node-json'
import { DOCUMENT_FORMAT, writeDocuments } from '../../src/services/node-documents'
import { openStore, type Store } from '../../src/store/db'
import { readDocuments, readDocumentsAt } from '../../src/store/node-documents'
import { seedNodes } from '../support/seed'
import { namesTable, watchQueries } from '../support/watch-queries'

let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
})

async function store(ids: string[]): Promise<Store> {
  db = await openStore(':memory:')
  await seedNodes(
    db,
    ids.map((id) => ({ id, description: `the ${id} node` })),
  )
  await writeDocuments(db, ids)
  return db
}

test('a node rendered again reads its document by row number, without the archive question', async () => {
  const base = await store(['a-pack', 'b-pack'])
  const reads: string[] = []
  const watched = watchQueries(base, (query) => {
    // The statement itself (a plugin sees its subqueries too): read from node_documents, asking of archives or not.
    const from = (query as { from?: { froms: { table?: { identifier: { name: string } } }[] } }).from?.froms[0]?.table?.identifier.name
    if (from !== 'node_documents') return
    reads.push(namesTable(query, 'archives') ? 'asked by id' : JSON.stringify(query).includes('rowid') ? 'known, by row' : 'known')
  })
  // No bytes for texts: every render reads the documents.
  const cache = createNodeJsonCache(watched, 'http://x', undefined, 0)
  const first = await cache.render(['a-pack', 'b-pack'])
  const again = await cache.render(['b-pack', 'a-pack'])
  expect(again).toEqual([first[1]!, first[0]!])
  expect(reads).toEqual(['asked by id', 'known, by row'])
})

test('a row number that holds another document now is not taken for the node: read again by id', async () => {
  const base = await store(['a-pack', 'b-pack'])
  const [a] = await readDocuments(base, DOCUMENT_FORMAT, ['a-pack'])
  const row = a!.place.row!
  expect(row).toBeGreaterThan(0)
  // a-pack's document gone, b-pack's written again under a-pack's old row number.
  await sql`delete from node_documents where node_id = 'a-pack'`.execute(base)
  await sql`update node_documents set rowid = ${row} where node_id = 'b-pack'`.execute(base)
  expect(await readDocumentsAt(base, DOCUMENT_FORMAT, new Map([['a-pack', a!.place]]))).toEqual([])

  const cache = createNodeJsonCache(base, 'http://x', undefined, 0)
  await writeDocuments(base, ['a-pack']) // a new row for a-pack
  const [text] = await cache.render(['a-pack'])
  expect(JSON.parse(text!).id).toBe('a-pack')
})

test('the archive answer of then comes with a document read from its place', async () => {
  const base = await store(['a-pack'])
  const [a] = await readDocuments(base, DOCUMENT_FORMAT, ['a-pack'])
  const [known] = await readDocumentsAt(base, DOCUMENT_FORMAT, new Map([['a-pack', { ...a!.place, archived: true }]]))
  expect(known?.archived).toBe(true)
  expect(known?.node_json).toBe(a!.node_json)
})
