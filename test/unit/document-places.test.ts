/**
 * A node's document read again from where it was found (its row number, its archive answer then) while the node has
 * not changed: without the archive question and the walk of the id's index, and never another node's document in
 * its place. (That a change of the node forgets the place is held by the tests of what changes show: archive modes,
 * refused archives, cache consistency.)
 */
import { afterEach, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { DocumentPlaces } from '../../src/services/document-places'
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

test("with the index's slots, places are kept by them: read again by row, and forgotten when the node changes", async () => {
  const base = await store(['a-pack', 'b-pack'])
  const reads: string[] = []
  const watched = watchQueries(base, (query) => {
    const from = (query as { from?: { froms: { table?: { identifier: { name: string } } }[] } }).from?.froms[0]?.table?.identifier.name
    if (from === 'node_documents') reads.push(namesTable(query, 'archives') ? 'asked by id' : 'known')
  })
  const slots = new Map([
    ['a-pack', 5000],
    ['b-pack', 7],
  ])
  const asked: string[] = []
  const slotOf = (id: string) => (asked.push(id), slots.get(id.toLowerCase()))
  const cache = createNodeJsonCache(watched, 'http://x', undefined, 0, { downloadsOf: () => undefined, slotOf })
  await cache.render(['a-pack', 'b-pack'])
  await cache.render(['a-pack', 'b-pack'])
  cache.nodesChanged(['a-pack'])
  await cache.render(['a-pack', 'b-pack'])
  // The second render knows both; after a-pack changed, only b-pack's place is known.
  expect(reads).toEqual(['asked by id', 'known', 'known', 'asked by id'])
  expect(new Set(asked)).toEqual(new Set(['a-pack', 'b-pack']))
})

test('the places table: a place a slot, unknown until set, forgotten by delete and clear', () => {
  const slots = new Map([
    ['a', 0],
    ['b', 3000],
    ['never set', 5],
  ])
  const places = new DocumentPlaces((id) => slots.get(id))
  expect(places.get('a')).toBeUndefined()
  places.set('a', { archived: true, row: 12 })
  places.set('b', { archived: false }) // PostgreSQL: no row number
  places.set('unknown to the index', { archived: true, row: 1 }) // no slot: not kept
  expect(places.get('a')).toEqual({ archived: true, row: 12 })
  expect(places.get('b')).toEqual({ archived: false, row: undefined })
  expect(places.get('unknown to the index')).toBeUndefined()
  expect(places.get('never set')).toBeUndefined() // within what the table has grown to
  places.set('a', { archived: false, row: 2 ** 40 })
  expect(places.get('a')).toEqual({ archived: false, row: 2 ** 40 })
  places.delete('a')
  expect(places.get('a')).toBeUndefined()
  expect(places.get('b')).toEqual({ archived: false, row: undefined })
  places.clear()
  expect(places.get('b')).toBeUndefined()
})

test('without an index, the table numbers the nodes it keeps places of itself', () => {
  const places = new DocumentPlaces()
  const ids = Array.from({ length: 3000 }, (_, i) => `node-${i}`)
  expect(places.get('node-1')).toBeUndefined()
  ids.forEach((id, i) => places.set(id, { archived: i % 2 === 0, row: i + 1 }))
  expect(ids.every((id, i) => places.get(id)?.row === i + 1 && places.get(id)?.archived === (i % 2 === 0))).toBe(true)
  places.delete('node-7')
  expect(places.get('node-7')).toBeUndefined()
  expect(places.get('node-8')).toEqual({ archived: true, row: 9 })
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

test('a place read while a change to the node landed is not kept: the next read asks again by id, archive and all', async () => {
  const base = await store(['a-pack'])
  const reads: string[] = []
  let cache!: ReturnType<typeof createNodeJsonCache>
  let armed = true
  const watched = watchQueries(base, (query) => {
    const from = (query as { from?: { froms: { table?: { identifier: { name: string } } }[] } }).from?.froms[0]?.table?.identifier.name
    if (from !== 'node_documents') return
    reads.push(namesTable(query, 'archives') ? 'asked by id' : 'known')
    // The change lands while the first read is under way: its archive answer may be old by the time it is back.
    if (armed) ((armed = false), queueMicrotask(() => cache.nodesChanged(['a-pack'])))
  })
  cache = createNodeJsonCache(watched, 'http://x', undefined, 0, { downloadsOf: () => undefined, slotOf: () => 0 })
  await cache.render(['a-pack'])
  await cache.render(['a-pack'])
  expect(reads).toEqual(['asked by id', 'asked by id'])
})
