/** The index warms without holding the event loop, and the store's answers meanwhile come from another thread. */
import { afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { createStoreSearch } from '../../src/search/store-search'
import { createThreadedStoreSearch } from '../../src/search/store-search-thread'
import { openStore, type Store } from '../../src/store/db'
import { turnsDuring } from '../support/event-loop'
import { seedNodes } from '../support/seed'
import { tempDirs } from '../support/tmp'
import { watchQueries } from '../support/watch-queries'

const dirs = tempDirs('warm-up')
let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
  dirs.cleanup()
})

const nodes = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `node-${i}`, description: i % 2 ? 'sprocket' : 'flywheel' }))
const query = { search: 'sprocket', includeBanned: false, offset: 0, limit: 5 }

/** Counts the statements sent through a store handle. */
function counted(store: Store) {
  const seen = { queries: 0 }
  const handle = watchQueries(store, () => seen.queries++)
  return { handle, seen }
}

describe('warm-up', () => {
  test('lets waiting work in at every step, not once per batch of rows', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, nodes(400))
    const search = createIndexedSearch(db, silentLog, { sliceMs: 0 })
    const turns = await turnsDuring(() => search.warm())
    // 400 nodes in steps of at most 16: at least 25 turns of the event loop while warming.
    expect(turns).toBeGreaterThanOrEqual(25)
    expect(search.status()).toMatchObject({ ready: true, indexed: 400 })
  })

  test('while it warms, queries are answered by the store thread, never on this thread’s store handle', async () => {
    const path = join(dirs.make(), 'registry.db')
    db = await openStore(path)
    await seedNodes(db, nodes(50))
    const { handle, seen } = counted(db)
    const thread = createThreadedStoreSearch(path, createStoreSearch(handle), silentLog)
    const search = createIndexedSearch(handle, silentLog, { fallback: thread })
    const before = seen.queries
    const cold = await search.find(query)
    expect(seen.queries).toBe(before)
    expect(cold.total).toBe(25)
    expect(await search.hostNodeOwner('nothing')).toBeUndefined()
    await search.warm()
    const warm = await search.find(query)
    expect(warm.total).toBe(25)
    expect(new Set(warm.ids).size).toBe(5)
    // The thread is closed once the index answers: it refuses new work.
    await expect(thread.find(query)).rejects.toThrow('closed')
  })

  test('a long warm-up (10,000 nodes and more) gets the fallback ready before anyone asks; a short one does not', async () => {
    for (const [count, expected] of [
      [9_999, 0],
      [10_000, 1],
    ] as const) {
      db = await openStore(':memory:')
      await seedNodes(db, nodes(count))
      let prepared = 0
      const search = createIndexedSearch(db, silentLog, { fallback: { ...createStoreSearch(db), prepare: () => prepared++ } })
      await search.warm()
      expect(prepared).toBe(expected)
      await db.destroy()
    }
    db = undefined
  })

  test('a prepared store thread answers as one started by a question', async () => {
    const path = join(dirs.make(), 'registry.db')
    db = await openStore(path)
    await seedNodes(db, nodes(20))
    const thread = createThreadedStoreSearch(path, createStoreSearch(db), silentLog)
    thread.prepare()
    thread.prepare()
    expect((await thread.find(query)).total).toBe(10)
    thread.close()
  })

  test('closing the store thread lets the queries under way finish', async () => {
    const path = join(dirs.make(), 'registry.db')
    db = await openStore(path)
    await seedNodes(db, nodes(20))
    const thread = createThreadedStoreSearch(path, createStoreSearch(db), silentLog)
    const pending = thread.find(query)
    thread.close()
    expect((await pending).total).toBe(10)
  })
})

describe('download counts held by the index', () => {
  test('none before it is warm; then those of the nodes it holds, kept current by count flushes', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, [
      { id: 'a', downloads: 5 },
      { id: 'b', downloads: 7 },
    ])
    const search = createIndexedSearch(db, silentLog)
    expect(search.downloadsOf(['a'])).toBeUndefined()
    await search.warm()
    expect(search.downloadsOf(['a', 'b', 'ghost'])).toEqual(
      new Map([
        ['a', 5],
        ['b', 7],
      ]),
    )
    await search.countsChanged(new Map([['a', 6]]))
    expect(search.downloadsOf(['a'])).toEqual(new Map([['a', 6]]))
    search.close()
  })

  test('none for a node whose refresh failed, until one succeeds', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, [{ id: 'a', downloads: 5 }])
    let failing = false
    const flaky = watchQueries(db, () => {
      if (failing) throw new Error('the store is gone')
    })
    const search = createIndexedSearch(flaky, silentLog)
    await search.warm()
    failing = true
    await expect(search.nodesChanged(['a'])).rejects.toThrow('the store is gone')
    expect(search.downloadsOf(['a'])).toEqual(new Map())
    failing = false
    await search.nodesChanged(['a'])
    expect(search.downloadsOf(['a'])).toEqual(new Map([['a', 5]]))
    search.close()
  })
})
