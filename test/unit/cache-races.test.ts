/**
 * The caches' race guards, each made to lose its race on purpose: a Kysely plugin runs a write at the exact
 * moment a read has fetched its rows but not yet used them.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { KyselyPlugin, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { createNodeJsonCache } from '../../src/services/node-json'
import { pickLatest } from '../../src/services/latest'
import { writeDocuments } from '../../src/services/node-documents'
import { openStore, type Store } from '../../src/store/db'
import { seedNodes } from '../support/seed'
import { watchQueries } from '../support/watch-queries'

/** Runs `between` once, right after the first query whose SQL matches `pattern` has read its rows. */
function interleave(pattern: RegExp, between: () => Promise<void>): KyselyPlugin {
  let armed = true
  let sqlOfQuery = new WeakMap<object, string>()
  return {
    transformQuery(args) {
      sqlOfQuery.set(args.queryId, JSON.stringify(args.node))
      return args.node
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (armed && pattern.test(sqlOfQuery.get(args.queryId) ?? '')) {
        armed = false
        await between()
      }
      return args.result
    },
  }
}

let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
})

const setDescription = (store: Store, id: string, description: string) =>
  store.updateTable('nodes').set({ description, updated_at: new Date().toISOString() }).where('id', '=', id).execute()

describe('node JSON cache', () => {
  test('rows read before a change landed are returned once but not kept as current', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, [{ id: 'a', description: 'old' }])
    const base = db
    let cache!: ReturnType<typeof createNodeJsonCache>
    const racing = db.withPlugin(
      // The node's row, read whole (it has no document: seeded straight into the store).
      interleave(/^(?!.*node_documents).*"nodes"/, async () => {
        await setDescription(base, 'a', 'new')
        cache.nodesChanged(['a'])
      }),
    )
    cache = createNodeJsonCache(racing, 'http://x')
    expect(JSON.parse((await cache.render(['a']))[0]!).description).toBe('old')
    expect(JSON.parse((await cache.render(['a']))[0]!).description).toBe('new')
  })

  test('a document read before a change landed is returned once but not kept as current', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, [{ id: 'a', description: 'old' }])
    await writeDocuments(db, ['a'])
    const base = db
    let cache!: ReturnType<typeof createNodeJsonCache>
    const racing = db.withPlugin(
      interleave(/"node_documents"/, async () => {
        await setDescription(base, 'a', 'new')
        await writeDocuments(base, ['a'])
        cache.nodesChanged(['a'])
      }),
    )
    cache = createNodeJsonCache(racing, 'http://x')
    expect(JSON.parse((await cache.render(['a']))[0]!).description).toBe('old')
    expect(JSON.parse((await cache.render(['a']))[0]!).description).toBe('new')
  })
})

describe('search index warm-up', () => {
  test('a batch read before a change never overwrites what the change applied', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, [{ id: 'a', description: 'sprocket' }])
    const base = db
    let search!: ReturnType<typeof createIndexedSearch>
    const racing = db.withPlugin(
      interleave(/"nodes"/, async () => {
        await setDescription(base, 'a', 'flywheel')
        await search.nodesChanged(['a'])
      }),
    )
    search = createIndexedSearch(racing, silentLog)
    await search.warm()
    const find = (text: string) => search.find({ search: text, includeBanned: false, offset: 0, limit: 10 })
    expect((await find('flywheel')).ids).toEqual(['a'])
    expect((await find('sprocket')).ids).toEqual([])
  })
})

describe('download counts in the index', () => {
  const list = (search: ReturnType<typeof createIndexedSearch>, text?: string) =>
    search.find({ search: text, includeBanned: false, offset: 0, limit: 10 }).then((r) => r.ids)

  test('a flush sets the counts of the nodes held without reading the store, and the order follows', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, [
      { id: 'a', downloads: 5 },
      { id: 'b', downloads: 10 },
    ])
    let queries = 0
    const counting = watchQueries(db, () => queries++)
    const search = createIndexedSearch(counting, silentLog)
    await search.warm()
    expect(await list(search)).toEqual(['b', 'a'])
    const before = queries
    await search.countsChanged(new Map([['a', 11]]))
    expect(queries).toBe(before)
    expect(await list(search)).toEqual(['a', 'b'])
  })

  test('a flush landing while the same node is being refreshed loses neither the count nor the refresh', async () => {
    db = await openStore(':memory:')
    await seedNodes(db, [
      { id: 'a', description: 'sprocket', downloads: 5 },
      { id: 'b', description: 'sprocket', downloads: 10 },
    ])
    const base = db
    let search!: ReturnType<typeof createIndexedSearch>
    // Armed after the warm-up: the flush lands right after the refresh has read its rows.
    let plugin: KyselyPlugin = { transformQuery: (args) => args.node, transformResult: async (args) => args.result }
    const racing = db.withPlugin({
      transformQuery: (args) => plugin.transformQuery(args),
      transformResult: (args) => plugin.transformResult(args),
    })
    search = createIndexedSearch(racing, silentLog)
    await search.warm()
    await setDescription(base, 'a', 'flywheel')
    plugin = interleave(/"nodes"/, async () => {
      await base.updateTable('node_downloads').set({ downloads: 42 }).where('node_id', '=', 'a').execute()
      await search.countsChanged(new Map([['a', 42]]))
    })
    await search.nodesChanged(['a'])
    expect(await list(search, 'flywheel')).toEqual(['a'])
    expect(await list(search)).toEqual(['a', 'b'])
  })
})

describe('search index before its warm-up', () => {
  test('changes committed before the warm-up starts cost no query, and the warm-up reads them', async () => {
    db = await openStore(':memory:')
    let queries = 0
    const counting = watchQueries(db, () => queries++)
    const search = createIndexedSearch(counting, silentLog)
    await seedNodes(db, [{ id: 'a', description: 'sprocket' }])
    await search.nodesChanged(['a'])
    await search.publishersChanged(['acme'])
    expect(queries).toBe(0)
    await search.warm()
    expect((await search.find({ search: 'sprocket', includeBanned: false, offset: 0, limit: 10 })).ids).toEqual(['a'])
  })
})

describe('latest version', () => {
  test('banned and deleted versions never count, not even when nothing else is active', () => {
    const v = (version: string, status: 'active' | 'pending' | 'flagged' | 'banned' | 'deleted') => ({ version, status })
    expect(pickLatest([v('2.0.0', 'banned'), v('1.0.0', 'pending')])).toEqual(v('1.0.0', 'pending'))
    expect(pickLatest([v('2.0.0', 'deleted'), v('1.5.0', 'flagged')])).toEqual(v('1.5.0', 'flagged'))
    expect(pickLatest([v('3.0.0', 'banned'), v('2.0.0', 'deleted')])).toBeUndefined()
    expect(pickLatest([v('3.0.0', 'pending'), v('1.0.0', 'active')])).toEqual(v('1.0.0', 'active'))
  })
})

describe('list response cache', () => {
  beforeEach(async () => {
    db = await openStore(':memory:')
  })

  test('an answer computed while a write landed is never served after it', async () => {
    const { Hono } = await import('hono')
    const { listed, listResponseCache } = await import('../../src/http/response-cache')
    let generation = 0
    let computed = 0
    const app = new Hono()
    const cache = listResponseCache({
      generation: () => generation,
      sequence: () => 0,
      changedAfter: () => false,
      enabled: () => true,
      gzip: false,
    })
    app.get('/list', cache, (c) => {
      computed++
      if (computed === 1) generation++ // a write lands while the first answer is being made
      listed(c, [])
      return c.json({ computed })
    })
    expect(await (await app.request('/list')).json()).toEqual({ computed: 1 })
    expect(await (await app.request('/list')).json()).toEqual({ computed: 2 })
    expect(await (await app.request('/list')).json()).toEqual({ computed: 2 }) // now cached
  })

  test('an answer listing a node that changed while it was made is never served after it', async () => {
    const { Hono } = await import('hono')
    const { listed, listResponseCache } = await import('../../src/http/response-cache')
    const nodeJson = createNodeJsonCache(db!, 'http://x')
    let computed = 0
    const app = new Hono()
    const cache = listResponseCache({
      generation: () => 0,
      sequence: () => nodeJson.sequence,
      changedAfter: (ids, sequence) => nodeJson.changedAfter(ids, sequence),
      enabled: () => true,
      gzip: false,
    })
    app.get('/list', cache, (c) => {
      computed++
      if (computed === 1) nodeJson.nodesChanged(['a']) // a write to a listed node lands meanwhile
      listed(c, ['a'])
      return c.json({ computed })
    })
    expect(await (await app.request('/list')).json()).toEqual({ computed: 1 })
    expect(await (await app.request('/list')).json()).toEqual({ computed: 2 })
    expect(await (await app.request('/list')).json()).toEqual({ computed: 2 })
  })
})
