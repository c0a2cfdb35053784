/**
 * The index takes a write's changes without holding the event loop however many nodes it touched (a publisher of
 * 20,000 banned or renamed held it 0.5-2.4 s), and reads a publisher's nodes again only when its name changed: the
 * one thing of a publisher the index holds.
 */
import { afterEach, expect, test } from 'bun:test'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { openStore, type Store } from '../../src/store/db'
import { seedNodes } from '../support/seed'

let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
})

const NODES = 400
const seeded = async () => {
  db = await openStore(':memory:')
  await seedNodes(
    db,
    Array.from({ length: NODES }, (_, i) => ({ id: `node-${i}`, publisher: 'bigpub', publisherName: 'Sprocket Works' })),
  )
  return db
}

/** The statements sent through a handle on the store, as SQL. */
function watched(store: Store) {
  const sent: string[] = []
  const handle = store.withPlugin({
    transformQuery: (args) => (sent.push(store.getExecutor().compileQuery(args.node, args.queryId).sql), args.node),
    transformResult: async (args) => args.result,
  })
  return { handle, sent }
}

/** Turns of the event loop that waiting work got while `work` ran. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0
  let running = true
  const ticker = (async () => {
    while (running) {
      await new Promise((resolve) => setTimeout(resolve, 0))
      turns++
    }
  })()
  await work()
  running = false
  await ticker
  return turns
}

const byName = (name: string) => ({ search: name, includeBanned: true, offset: 0, limit: 1 })

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
  expect(sent[0]).not.toContain('"nodes"')
})

test("a renamed publisher's nodes are read a page at a time and found by the new name, waiting work let in", async () => {
  const store = await seeded()
  const { handle, sent } = watched(store)
  const search = createIndexedSearch(handle, silentLog, { sliceMs: 0 })
  await search.warm()
  expect((await search.find(byName('sprocket'))).total).toBe(NODES)
  sent.length = 0
  await store.updateTable('publishers').set({ name: 'Flywheel Guild' }).where('id', '=', 'bigpub').execute()
  const turns = await turnsDuring(() => search.publishersChanged(['bigpub']))
  // 400 nodes in steps of at most 16.
  expect(turns).toBeGreaterThanOrEqual(25)
  expect(sent.filter((q) => q.includes('from "nodes"'))).toHaveLength(2)
  expect((await search.find(byName('flywheel'))).total).toBe(NODES)
  expect((await search.find(byName('sprocket'))).total).toBe(0)
})

test('a change to many nodes is read and applied in steps, waiting work let in', async () => {
  const store = await seeded()
  const search = createIndexedSearch(store, silentLog, { sliceMs: 0 })
  await search.warm()
  await store.updateTable('nodes').set({ status: 'banned' }).execute()
  const ids = Array.from({ length: NODES }, (_, i) => `node-${i}`)
  const turns = await turnsDuring(() => search.nodesChanged(ids))
  expect(turns).toBeGreaterThanOrEqual(25)
  expect((await search.find({ ...byName('sprocket'), includeBanned: false })).total).toBe(0)
  expect((await search.find(byName('sprocket'))).total).toBe(NODES)
})
