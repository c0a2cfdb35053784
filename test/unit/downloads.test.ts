/** The download counter: counts kept in memory, flushed in one transaction, at shutdown too; caches keep rendered nodes. */
import { afterEach, describe, expect, test } from 'bun:test'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { createDownloadCounter } from '../../src/services/downloads'
import { createNodeJsonCache } from '../../src/services/node-json'
import { listChanges } from '../../src/store/changes'
import { openStore, type Store } from '../../src/store/db'
import { seedNodes } from '../support/seed'
import { namesTable, readsTable, watchQueries } from '../support/watch-queries'

let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
})

/** A handle on `db` that counts reads of the nodes table and updates of their counts; `failUpdates` makes those throw. */
function watch(db: Store) {
  const seen = { selects: 0, updates: 0, failUpdates: 0 }
  const store = watchQueries(db, (query) => {
    if (readsTable(query, 'nodes')) seen.selects++
    if (query.kind === 'UpdateQueryNode' && namesTable(query, 'node_downloads')) {
      seen.updates++
      if (seen.failUpdates > 0) {
        seen.failUpdates--
        throw new Error('database is locked')
      }
    }
  })
  return { seen, store }
}

async function world() {
  db = await openStore(':memory:')
  await seedNodes(db, [
    { id: 'a', description: 'sprocket', downloads: 5 },
    { id: 'b', description: 'flywheel', downloads: 7 },
  ])
  const { seen, store } = watch(db)
  const search = createIndexedSearch(store, silentLog)
  await search.warm()
  const nodeJson = createNodeJsonCache(store, 'http://x')
  const counter = createDownloadCounter({ db: store, now: () => new Date('2026-01-01T00:00:00Z'), search, nodeJson, log: silentLog })
  const downloads = async (id: string) => JSON.parse((await nodeJson.render([id]))[0]!).downloads as number
  return { seen, search, nodeJson, counter, downloads }
}

describe('download counter', () => {
  test('counts stay in memory until a flush writes them all in one transaction and one feed entry per node', async () => {
    const { seen, counter, downloads } = await world()
    const serial = (await listChanges(db!, 0, 1000)).at(-1)?.serial ?? 0
    for (let i = 0; i < 3; i++) counter.count('a')
    counter.count('b')
    expect(counter.pending).toBe(4)
    expect(seen.updates).toBe(0)
    expect(await downloads('a')).toBe(5)

    await counter.flush()
    expect(counter.pending).toBe(0)
    expect(seen.updates).toBe(2) // one statement per node, in one transaction
    const fed = await listChanges(db!, serial, 100)
    expect(fed.map((c) => `${c.kind}:${c.entity_id}`).sort()).toEqual(['node:a', 'node:b'])
    expect(await downloads('a')).toBe(8)
    expect(await downloads('b')).toBe(8)
  })

  test('a flush keeps rendered nodes: the new count is written into the cached text, nothing is rendered again', async () => {
    const { seen, counter, nodeJson, downloads } = await world()
    expect(await downloads('a')).toBe(5)
    const bytes = nodeJson.bytes
    counter.count('a')
    await counter.flush()
    const selects = seen.selects
    expect(await downloads('a')).toBe(6)
    expect(seen.selects).toBe(selects) // served from the cache
    expect(nodeJson.bytes).toBe(bytes)
  })

  test('the index takes the new counts at the flush: lists order by downloads', async () => {
    const { counter, search } = await world()
    const order = async () => (await search.find({ includeBanned: false, offset: 0, limit: 10 })).ids
    expect(await order()).toEqual(['b', 'a'])
    for (let i = 0; i < 3; i++) counter.count('a')
    expect(await order()).toEqual(['b', 'a'])
    await counter.flush()
    expect(await order()).toEqual(['a', 'b'])
  })

  test('a failed flush keeps its counts for the next one', async () => {
    const { seen, counter, downloads } = await world()
    counter.count('a')
    counter.count('a')
    seen.failUpdates = 1
    await counter.flush()
    expect(counter.pending).toBe(2)
    counter.count('a')
    await counter.flush()
    expect(counter.pending).toBe(0)
    expect(await downloads('a')).toBe(8)
  })

  test('a flush that committed but whose index failed to follow is not written again', async () => {
    const { search, nodeJson } = await world()
    const failingIndex = {
      ...search,
      countsChanged: async () => {
        throw new Error('the index failed')
      },
    }
    const counter = createDownloadCounter({
      db: db!,
      now: () => new Date('2026-01-01T00:00:00Z'),
      search: failingIndex,
      nodeJson,
      log: silentLog,
    })
    counter.count('a')
    await counter.flush()
    expect(counter.pending).toBe(0)
    await counter.flush()
    const stored = await db!.selectFrom('node_downloads').select('downloads').where('node_id', '=', 'a').executeTakeFirstOrThrow()
    expect(stored.downloads).toBe(6)
    // The cached and served count took it all the same.
    expect(JSON.parse((await nodeJson.render(['a']))[0]!).downloads).toBe(6)
  })

  test('stop() writes what is left and stops the timer; counts of nodes gone since are dropped', async () => {
    const { counter, downloads } = await world()
    counter.start(60_000)
    counter.count('b')
    counter.count('ghost')
    await counter.stop()
    expect(counter.pending).toBe(0)
    expect(await downloads('b')).toBe(8)
  })

  test('the timer flushes on its own', async () => {
    const { counter, downloads } = await world()
    counter.count('a')
    counter.start(5)
    for (let i = 0; i < 1000 && counter.pending; i++) await Bun.sleep(5) // waits for the event, bounded
    await counter.stop()
    expect(await downloads('a')).toBe(6)
  })
})
