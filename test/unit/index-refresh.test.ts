/**
 * The index takes a write's changes without holding the event loop however many nodes it touched (a publisher of
 * 20,000 banned or renamed held it 0.5-2.4 s), and reads a publisher's nodes again only when some document it holds
 * of the publisher does not carry the publisher's current name: the one thing of a publisher the index holds.
 */
import { afterEach, expect, test } from 'bun:test'
import { silentLog } from '../../src/log'
import { createIndexedSearch, type IndexedSearch } from '../../src/search/indexed-search'
import { applyChanges } from '../../src/services/changes'
import { createNodeJsonCache } from '../../src/services/node-json'
import { openStore, type Store } from '../../src/store/db'
import { turnsDuring } from '../support/event-loop'
import { seedNodes } from '../support/seed'
import { watchQueries } from '../support/watch-queries'

let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
})

/** More than two statements' worth (500 each) of one publisher's nodes. */
const NODES = 1_201
const ids = Array.from({ length: NODES }, (_, i) => `node-${String(i).padStart(4, '0')}`)
const seeded = async () => {
  db = await openStore(':memory:')
  await seedNodes(
    db,
    ids.map((id) => ({ id, publisher: 'bigpub', publisherName: 'Sprocket Works' })),
  )
  return db
}

/** The statements sent through a handle on the store, as SQL; `fail(sql)` makes one throw. */
function watched(store: Store, fail: (sql: string) => boolean = () => false) {
  const sent: string[] = []
  const handle = watchQueries(store, (query, queryId) => {
    const sql = store.getExecutor().compileQuery(query, queryId).sql
    sent.push(sql)
    if (fail(sql)) throw new Error('store fault')
  })
  return { handle, sent }
}

const found = async (search: IndexedSearch, text: string) =>
  (await search.find({ search: text, includeBanned: true, offset: 0, limit: 1 })).total
const rename = (store: Store, name: string) => store.updateTable('publishers').set({ name }).where('id', '=', 'bigpub').execute()
const nodeReads = (sent: string[]) => sent.filter((q) => q.includes('from "nodes"'))

test('a publisher change that is not a rename reads its row, not its nodes', async () => {
  const store = await seeded()
  const { handle, sent } = watched(store)
  const search = createIndexedSearch(handle, silentLog)
  await search.warm()
  sent.length = 0
  await store.updateTable('publishers').set({ description: 'edited' }).where('id', '=', 'bigpub').execute()
  await search.publishersChanged(['bigpub'])
  expect(sent).toHaveLength(1)
  expect(sent[0]).toContain('from "publishers"')
  expect(nodeReads(sent)).toHaveLength(0)
})

test("a renamed publisher's nodes are read a page at a time and found by the new name, waiting work let in", async () => {
  const store = await seeded()
  const { handle, sent } = watched(store)
  const search = createIndexedSearch(handle, silentLog, { sliceMs: 0 })
  await search.warm()
  expect(await found(search, 'sprocket')).toBe(NODES)
  sent.length = 0
  await rename(store, 'Flywheel Guild')
  const turns = await turnsDuring(() => search.publishersChanged(['bigpub']))
  // 1,201 nodes in steps of at most 16.
  expect(turns).toBeGreaterThanOrEqual(75)
  expect(nodeReads(sent)).toHaveLength(3)
  expect(await found(search, 'flywheel')).toBe(NODES)
  expect(await found(search, 'sprocket')).toBe(0)
})

test('a rename among node changes (one change set: nodes, then publishers) still reaches every node', async () => {
  const store = await seeded()
  const search = createIndexedSearch(store, silentLog)
  await search.warm()
  await rename(store, 'Flywheel Guild')
  const nodeJson = createNodeJsonCache(store, 'http://registry.test')
  // The one node read first carries the new name: the others still hold the old one.
  await applyChanges({ search, nodeJson }, { nodes: ['node-0007'], publishers: ['bigpub'] })
  expect(await found(search, 'flywheel')).toBe(NODES)
  expect(await found(search, 'sprocket')).toBe(0)
})

test("a rename whose reading failed part way is read again at the publisher's next change", async () => {
  const store = await seeded()
  let failing = false
  const { handle } = watched(store, (sql) => failing && sql.includes('from "nodes"') && sql.includes('"nodes"."id" >'))
  const search = createIndexedSearch(handle, silentLog)
  await search.warm()
  await rename(store, 'Flywheel Guild')
  failing = true
  await expect(search.publishersChanged(['bigpub'])).rejects.toThrow('store fault')
  expect(await found(search, 'flywheel')).toBe(500)
  failing = false
  await store.updateTable('publishers').set({ description: 'edited' }).where('id', '=', 'bigpub').execute()
  await search.publishersChanged(['bigpub'])
  expect(await found(search, 'flywheel')).toBe(NODES)
  expect(await found(search, 'sprocket')).toBe(0)
})

test('a change to many nodes is read 500 a statement and applied in steps, waiting work let in', async () => {
  const store = await seeded()
  const { handle, sent } = watched(store)
  const search = createIndexedSearch(handle, silentLog, { sliceMs: 0 })
  await search.warm()
  await store.updateTable('nodes').set({ status: 'banned' }).execute()
  sent.length = 0
  const turns = await turnsDuring(() => search.nodesChanged(ids))
  expect(turns).toBeGreaterThanOrEqual(75)
  expect(nodeReads(sent)).toHaveLength(3)
  expect((await search.find({ search: 'sprocket', includeBanned: false, offset: 0, limit: 1 })).total).toBe(0)
  expect(await found(search, 'sprocket')).toBe(NODES)
})
