/** Every cache is bounded by bytes, and a change drops only what it touches. */
import { afterEach, describe, expect, test } from 'bun:test'
import { Hono } from 'hono'
import { listed, listResponseCache } from '../../src/http/response-cache'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { createNodeJsonCache } from '../../src/services/node-json'
import { writeDocuments } from '../../src/services/node-documents'
import { openStore, type Store } from '../../src/store/db'
import { seedNodes } from '../support/seed'
import { namesTable, readsTable, watchQueries } from '../support/watch-queries'

let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
})

/** A store of `n` nodes with their documents, whose reads of the nodes' rows or of their counts are counted. */
async function store(n: number) {
  db = await openStore(':memory:')
  await seedNodes(
    db,
    Array.from({ length: n }, (_, i) => ({ id: `node-${i}`, description: `sprocket number ${i} `.repeat(20) })),
  )
  await writeDocuments(
    db,
    Array.from({ length: n }, (_, i) => `node-${i}`),
  )
  const reads = { nodes: 0 }
  const watched = watchQueries(db, (query) => {
    if (readsTable(query, 'nodes') || readsTable(query, 'node_downloads')) reads.nodes++
  })
  return { db: watched, reads }
}

describe('node JSON cache', () => {
  test('holds at most its bytes; once full, keeps a node asked for again, the oldest going for it', async () => {
    const { db, reads } = await store(40)
    const one = (await createNodeJsonCache(db, 'http://x').render(['node-0']))[0]!.length
    const cache = createNodeJsonCache(db, 'http://x', undefined, one * 10)
    for (let i = 0; i < 40; i++) await cache.render([`node-${i}`])
    expect(cache.bytes).toBeLessThanOrEqual(one * 10)
    expect(cache.bytes).toBeGreaterThan(one * 5)
    const before = reads.nodes
    await cache.render(['node-1']) // kept while there was room
    expect(reads.nodes).toBe(before)
    // Asked for once when full: not kept then, read again at the second ask, and kept; the oldest went for them.
    for (const id of ['node-39', 'node-38']) {
      await cache.render([id])
      await cache.render([id])
    }
    expect(reads.nodes).toBe(before + 2)
    expect(cache.bytes).toBeLessThanOrEqual(one * 10)
    await cache.render(['node-0'])
    expect(reads.nodes).toBe(before + 3)
  })

  test('once nearly full, a node dropped by a change is kept again at its first render', async () => {
    const { db, reads } = await store(80)
    const one = (await createNodeJsonCache(db, 'http://x').render(['node-0']))[0]!.length
    const cache = createNodeJsonCache(db, 'http://x', undefined, one * 40)
    for (let i = 0; i < 80; i++) await cache.render([`node-${i}`])
    for (let i = 60; i < 80; i++) await cache.render([`node-${i}`]) // asked again: kept, the oldest out
    // node-30 came in while there was room, never missed since: held.
    let before = reads.nodes
    await cache.render(['node-30'])
    expect(reads.nodes).toBe(before)
    cache.nodesChanged(['node-30'])
    expect(cache.bytes).toBeGreaterThanOrEqual((one * 40 * 7) / 8) // still past the share where all come in
    before = reads.nodes
    await cache.render(['node-30'])
    await cache.render(['node-30'])
    expect(reads.nodes).toBe(before + 1)
  })

  test('a page whose new nodes push its own cached ones out still lists every node', async () => {
    const { db } = await store(40)
    const one = (await createNodeJsonCache(db, 'http://x').render(['node-0']))[0]!.length
    const cache = createNodeJsonCache(db, 'http://x', undefined, one * 10)
    const ids = Array.from({ length: 40 }, (_, i) => `node-${i}`)
    const expected = await createNodeJsonCache(db, 'http://x').render(ids)
    // The oldest cached nodes lead the next page; its new ones fill the cache and evict them while it is read.
    await cache.render(ids.slice(0, 8))
    const page = [...ids.slice(0, 8), ...ids.slice(20, 30)]
    expect(await cache.render(page)).toEqual([...expected.slice(0, 8), ...expected.slice(20, 30)])
    expect(await cache.render(ids)).toEqual(expected)
  })

  test('a change to one node drops that node only', async () => {
    const { db, reads } = await store(3)
    const cache = createNodeJsonCache(db, 'http://x')
    await cache.render(['node-0', 'node-1', 'node-2'])
    const sequence = cache.sequence
    cache.nodesChanged(['node-1'])
    expect(cache.changedAfter(['node-0', 'node-2'], sequence)).toBe(false)
    expect(cache.changedAfter(['node-1'], sequence)).toBe(true)
    const before = reads.nodes
    await cache.render(['node-0', 'node-2'])
    expect(reads.nodes).toBe(before)
    await cache.render(['node-1'])
    expect(reads.nodes).toBe(before + 1)
  })

  test('a publisher change drops every node (publisher names show inside them)', async () => {
    const { db } = await store(2)
    const cache = createNodeJsonCache(db, 'http://x')
    await cache.render(['node-0', 'node-1'])
    const sequence = cache.sequence
    cache.publishersChanged()
    expect(cache.bytes).toBe(0)
    expect(cache.changedAfter(['node-0'], sequence)).toBe(true)
  })
})

describe('rendered publishers inside nodes', () => {
  test('are read once for many nodes, and again after a publisher change', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, [
      { id: 'a', publisher: 'acme', publisherName: 'Acme' },
      { id: 'b', publisher: 'acme', publisherName: 'Acme' },
    ])
    const reads = { publishers: 0 }
    const counting = watchQueries(db, (query) => {
      if (readsTable(query, 'publishers') && !namesTable(query, 'nodes')) reads.publishers++
    })
    const cache = createNodeJsonCache(counting, 'http://x')
    await cache.render(['a'])
    expect(reads.publishers).toBe(1)
    await cache.render(['b'])
    expect(reads.publishers).toBe(1)
    await db.updateTable('publishers').set({ name: 'Acme Corp' }).where('id', '=', 'acme').execute()
    cache.publishersChanged()
    expect(JSON.parse((await cache.render(['b']))[0]!).publisher.name).toBe('Acme Corp')
    expect(reads.publishers).toBe(2)
  })

  test('are kept when there are nearly as many as nodes (each node its own publisher), not read again for every page', async () => {
    db = await openStore(':memory:')
    const ids = Array.from({ length: 40 }, (_, i) => `pack-${i}`)
    await seedNodes(
      db,
      ids.map((id, i) => ({ id, publisher: `pub-${i}`, publisherName: `Publisher ${i}` })),
    )
    await writeDocuments(db, ids)
    const reads = { publishers: 0 }
    const counting = watchQueries(db, (query) => {
      if (readsTable(query, 'publishers') && !namesTable(query, 'nodes')) reads.publishers++
    })
    // 40 publishers of some 250 bytes each: more than a 16th of these bytes (their share once), within half of them.
    const cache = createNodeJsonCache(counting, 'http://x', undefined, 40_000)
    await cache.render(ids)
    expect(reads.publishers).toBe(1)
    cache.nodesChanged(ids) // the nodes are rendered again; their publishers are as they were
    const page = (await cache.render(ids)).map((t) => JSON.parse(t) as { publisher: { name: string } })
    expect(reads.publishers).toBe(1)
    expect(page[39]!.publisher.name).toBe('Publisher 39')
  })
})

test('with no bytes to keep, every node still shows its publisher', async () => {
  db = await openStore(':memory:')
  await seedNodes(db, [
    { id: 'a-pack', publisher: 'pub-a' },
    { id: 'b-pack', publisher: 'pub-b' },
    { id: 'c-pack', publisher: 'pub-c' },
  ])
  await writeDocuments(db, ['a-pack', 'b-pack', 'c-pack'])
  const cache = createNodeJsonCache(db, 'http://x', undefined, 0)
  await cache.render(['a-pack']) // its publisher is the one text held
  const page = (await cache.render(['a-pack', 'b-pack', 'c-pack'])).map((t) => JSON.parse(t) as { publisher?: { id: string } })
  expect(page.map((n) => n.publisher?.id)).toEqual(['pub-a', 'pub-b', 'pub-c'])
})

describe('list response cache', () => {
  function app(opts: { maxBytes?: number } = {}) {
    let generation = 0
    const changed = new Map<string, number>()
    let sequence = 0
    const computed: string[] = []
    const hono = new Hono()
    const cache = listResponseCache({
      generation: () => generation,
      sequence: () => sequence,
      changedAfter: (ids, since) => ids.some((id) => (changed.get(id) ?? 0) > since),
      enabled: () => true,
      gzip: true,
      maxBytes: opts.maxBytes,
    })
    hono.get('/list/:id', cache, (c) => {
      const id = c.req.param('id')
      computed.push(id)
      listed(c, [id])
      return c.json({ id, padding: 'x'.repeat(1000) })
    })
    const get = async (id: string, gzip = false) =>
      (await hono.request(`/list/${id}`, { headers: gzip ? { 'accept-encoding': 'gzip' } : {} })).status
    return {
      get,
      computed,
      nodeChanged: (id: string) => changed.set(id, ++sequence),
      listsChanged: () => generation++,
    }
  }

  test('holds at most its bytes; once nearly full, keeps an answer asked for again, the oldest going for it', async () => {
    const t = app({ maxBytes: 5000 }) // answers of about 1,160 bytes: past seven eighths after four
    for (const id of ['a', 'b', 'c', 'd', 'e']) await t.get(id) // e is answered, not kept
    await t.get('e') // asked again: kept now, a going for it
    await t.get('e')
    await t.get('d')
    expect(t.computed).toEqual(['a', 'b', 'c', 'd', 'e', 'e'])
    await t.get('a')
    expect(t.computed.at(-1)).toBe('a')
  })

  test('a change to a node drops the answers listing it, and only those', async () => {
    const t = app()
    await t.get('a')
    await t.get('b')
    t.nodeChanged('a')
    await t.get('a')
    await t.get('b')
    expect(t.computed).toEqual(['a', 'b', 'a'])
  })

  test('a change to what lists hold drops every answer', async () => {
    const t = app()
    await t.get('a')
    await t.get('b', true)
    t.listsChanged()
    await t.get('a')
    await t.get('b', true)
    expect(t.computed).toEqual(['a', 'b', 'a', 'b'])
  })
})

describe('search query cache', () => {
  test('once nearly full, keeps a query asked for again', async () => {
    const { db } = await store(200)
    const search = createIndexedSearch(db, silentLog, { queryCacheBytes: 4000 })
    await search.warm()
    const ask = (text: string) => search.find({ search: text, includeBanned: false, offset: 0, limit: 10 })
    for (let i = 0; i < 50; i++) await ask(`sprocket ${i}`)
    expect(search.cacheBytes).toBeGreaterThanOrEqual((4000 * 7) / 8)
    const before = search.cacheBytes
    await ask('number 7') // a first miss: answered, not kept
    expect(search.cacheBytes).toBe(before)
    await ask('number 7') // asked again: kept
    expect(search.cacheBytes).not.toBe(before)
  })

  test('holds at most its bytes', async () => {
    const { db } = await store(200)
    const search = createIndexedSearch(db, silentLog, { queryCacheBytes: 4000 })
    await search.warm()
    for (let i = 0; i < 50; i++) await search.find({ search: `sprocket ${i}`, includeBanned: false, offset: 0, limit: 10 })
    await search.find({ includeBanned: false, offset: 0, limit: 10 }) // 200 slots: 800 bytes
    expect(search.cacheBytes).toBeGreaterThan(800)
    expect(search.cacheBytes).toBeLessThanOrEqual(4000)
  })
})
