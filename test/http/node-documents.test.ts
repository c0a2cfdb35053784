/**
 * Node documents: every write stores its nodes' rendered JSON, reads serve it (and fall back to the rows for nodes
 * without one), and the fill writes what is missing without ever replacing what a write stored.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { KyselyPlugin } from 'kysely'
import { commitWrite } from '../../src/services/changes'
import { createNodeJsonCache } from '../../src/services/node-json'
import { fillMissingDocuments } from '../../src/services/document-fill'
import { DOCUMENT_FORMAT, makeDocuments } from '../../src/services/node-documents'
import { renderNode } from '../../src/services/nodes'
import { saveDocuments } from '../../src/store/node-documents'
import { findNode, listNodesByIds } from '../../src/store/nodes'
import type { Store } from '../../src/store/db'
import { aliceWithPublisher, makeTestApp, PUBLIC_URL, publish, publishActive, upload, type TestApp } from '../support/app'
import { turnsDuring } from '../support/event-loop'
import { staleSearchTexts } from '../support/documents'
import { seedNodes } from '../support/seed'
import { readsTable, watchQueries } from '../support/watch-queries'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

/** The documents stored, of any format, in id order. */
const stored = (db: Store) => db.selectFrom('node_documents').selectAll().orderBy('node_id').execute()

/** A handle on the store that counts the queries reading each of these tables. */
function counting(db: Store, tables: string[]) {
  const reads: Record<string, number> = Object.fromEntries(tables.map((name) => [name, 0]))
  const watched = watchQueries(db, (query) => {
    for (const name of tables) if (readsTable(query, name)) reads[name]!++
  })
  return { db: watched, reads }
}

/** The node as a new cache renders it (from its document when it has one) and as rendered from its rows. */
async function bothRenderings(id: string) {
  const [text] = await createNodeJsonCache(t.deps.db, PUBLIC_URL).render([id])
  return { served: JSON.parse(text!), fromRows: JSON.parse(JSON.stringify(await renderNode(t.deps, (await findNode(t.deps.db, id))!))) }
}

describe('node documents', () => {
  test('a publish, an upload, an edit, a review and a deprecation each leave the node served exactly as its rows render it', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const v1 = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const check = async () => {
      const { served, fromRows } = await bothRenderings('pack')
      expect(served).toEqual(fromRows)
      return served
    }
    expect((await check()).latest_version.downloadUrl).toBe(`${PUBLIC_URL}/archives/acme/pack/1.0.0/node.zip`)
    // Published but not uploaded yet: the latest version stays; uploaded, the new one is the latest.
    const pending = await publish(t, { pat, node: 'pack', version: '1.1.0' })
    expect((await check()).latest_version.version).toBe('1.0.0')
    expect((await upload(t, pending.body.signedUrl)).status).toBe(200)
    expect((await check()).latest_version).toMatchObject({
      version: '1.1.0',
      downloadUrl: `${PUBLIC_URL}/archives/acme/pack/1.1.0/node.zip`,
    })
    expect(
      (await t.call('PUT', '/publishers/acme/nodes/pack', { token, body: { id: 'pack', description: 'now <b>bold</b> "quoted"' } })).status,
    ).toBe(200)
    expect((await check()).description).toBe('now <b>bold</b> "quoted"')
    await t.call('POST', '/nodes/pack/reviews?star=4')
    expect((await check()).rating).toBe(4)
    expect((await t.call('PUT', `/publishers/acme/nodes/pack/versions/${v1.id}`, { token, body: { deprecated: true } })).status).toBe(200)
    await check()
    expect((await stored(t.deps.db)).map((d) => [d.node_id, d.format])).toEqual([['pack', DOCUMENT_FORMAT]])
  })

  test('a page of nodes reads their documents in one query, not their latest versions', async () => {
    const { pat } = await aliceWithPublisher(t)
    for (const node of ['a-pack', 'b-pack', 'c-pack']) await publishActive(t, { pat, node, version: '1.0.0' })
    const { db, reads } = counting(t.deps.db, ['nodes', 'node_downloads', 'node_versions'])
    const texts = await createNodeJsonCache(db, PUBLIC_URL).render(['a-pack', 'b-pack', 'c-pack'])
    expect(texts.map((text) => JSON.parse(text).id)).toEqual(['a-pack', 'b-pack', 'c-pack'])
    // Their counts in one more, from their narrow rows (schema 17).
    expect(reads).toEqual({ nodes: 0, node_downloads: 1, node_versions: 0 })
  })

  test('whether the latest version has an archive here is read with the document, and a version without one has no download link', async () => {
    const { pat } = await aliceWithPublisher(t)
    for (const node of ['a-pack', 'b-pack']) await publishActive(t, { pat, node, version: '1.0.0' })
    // b-pack's archive is gone (as a mirror's metadata-only version has none).
    const b = (await findNode(t.deps.db, 'b-pack'))!
    await t.deps.db.deleteFrom('archives').where('version_id', '=', b.latest_version_id!).execute()
    let apart = 0
    const db = watchQueries(t.deps.db, (query) => {
      if (readsTable(query, 'archives') && !readsTable(query, 'node_documents')) apart++
    })
    const texts = await createNodeJsonCache(db, PUBLIC_URL).render(['a-pack', 'b-pack'])
    expect(texts.map((text) => JSON.parse(text).latest_version.downloadUrl)).toEqual([
      `${PUBLIC_URL}/archives/acme/a-pack/1.0.0/node.zip`,
      '',
    ])
    expect(apart).toBe(0)
  })

  test('pages of nodes are sent as UTF-8 JSON, whatever their text holds, over a real server', async () => {
    const { pat } = await aliceWithPublisher(t)
    const description = 'Bildverarbeitung für 图像 — 🎨 "quoted" \\ back'
    await publishActive(t, { pat, node: 'uni-pack', version: '1.0.0', nodeFields: { description } })
    await publishActive(t, { pat, node: 'ascii-pack', version: '1.0.0' })
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: t.app.fetch })
    try {
      for (const path of ['/nodes', '/nodes/search?search=pack', '/publishers/acme/nodes/v2']) {
        const res = await fetch(new URL(path, server.url))
        expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({ path, status: 200, type: 'application/json' })
        const page = (await res.json()) as { nodes: { id: string; description: string }[]; total: number }
        expect(page.total).toBe(2)
        expect(page.nodes.find((n) => n.id === 'uni-pack')!.description).toBe(description)
      }
    } finally {
      server.stop(true)
    }
  })

  test('a node read whole brings its document along: rendering it reads nothing more', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const row = (await findNode(t.deps.db, 'pack'))!
    const { db, reads } = counting(t.deps.db, ['nodes', 'node_versions'])
    const cache = createNodeJsonCache(db, PUBLIC_URL)
    await cache.render(['pack'], { rows: [row], sequence: cache.sequence })
    expect(reads).toEqual({ nodes: 0, node_versions: 0 })
  })

  test('what is put in when served follows its own changes: the count, the publisher, the archive', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await t.call('GET', '/nodes/pack/install')
    await t.deps.downloads.flush()
    expect((await t.call('PUT', '/publishers/acme', { token, body: { name: 'Acme Tools' } })).status).toBe(200)
    const { served, fromRows } = await bothRenderings('pack')
    expect(served).toEqual(fromRows)
    expect(served).toMatchObject({ downloads: 1, publisher: { id: 'acme', name: 'Acme Tools' } })
    // The document itself holds none of them.
    const [doc] = await stored(t.deps.db)
    expect(doc!.node_json).not.toContain('"downloads"')
    expect(doc!.node_json).not.toContain('Acme Tools')
    expect(doc!.version_json).not.toContain('downloadUrl')
    expect(doc!.download_path).toBe('/archives/acme/pack/1.0.0/node.zip')
  })

  test('download counts come from the warm index when it holds the node, else from the store', async () => {
    const { pat } = await aliceWithPublisher(t)
    for (const node of ['a-pack', 'b-pack']) await publishActive(t, { pat, node, version: '1.0.0' })
    await t.call('GET', '/nodes/b-pack/install')
    await t.deps.downloads.flush()
    const asked: string[][] = []
    const cache = createNodeJsonCache(t.deps.db, PUBLIC_URL, undefined, undefined, {
      downloadsOf: (ids) => {
        asked.push([...ids])
        return new Map([['a-pack', 42]])
      },
      slotOf: () => undefined,
    })
    const texts = await cache.render(['a-pack', 'b-pack'])
    expect(texts.map((text) => JSON.parse(text).downloads)).toEqual([42, 1])
    expect(asked).toEqual([['a-pack', 'b-pack']])
  })

  test('nodes without a document (or with one of another format) are served from their rows', async () => {
    await seedNodes(t.deps.db, [{ id: 'seeded', description: 'from its rows' }])
    expect(await stored(t.deps.db)).toEqual([])
    const { served, fromRows } = await bothRenderings('seeded')
    expect(served).toEqual(fromRows)
    expect(served.description).toBe('from its rows')
    const [made] = await makeDocuments(t.deps.db, await listNodesByIds(t.deps.db, ['seeded']))
    await saveDocuments(t.deps.db, DOCUMENT_FORMAT + 1, [
      { ...made!, node_json: made!.node_json.replace('from its rows', 'another format') },
    ])
    expect((await bothRenderings('seeded')).served.description).toBe('from its rows')
  })
})

describe('filling missing documents', () => {
  test('writes one for every node without one of this format, in batches, and then finds nothing left', async () => {
    await seedNodes(
      t.deps.db,
      Array.from({ length: 1203 }, (_, i) => ({ id: `node-${String(i).padStart(4, '0')}`, description: `number ${i}` })),
    )
    const [made] = await makeDocuments(t.deps.db, await listNodesByIds(t.deps.db, ['node-0007']))
    await saveDocuments(t.deps.db, DOCUMENT_FORMAT - 1, [made!])
    expect(await fillMissingDocuments(t.deps.db)).toBe(1203)
    const docs = await stored(t.deps.db)
    expect(docs.length).toBe(1203)
    expect(new Set(docs.map((d) => d.format))).toEqual(new Set([DOCUMENT_FORMAT]))
    expect(JSON.parse(docs[1000]!.node_json).description).toBe('number 1000')
    expect(await fillMissingDocuments(t.deps.db)).toBe(0)
  })

  test('writes the search texts of a node that has a document but no texts (written by an older executable)', async () => {
    await seedNodes(t.deps.db, [
      { id: 'kept', description: 'sprocket' },
      { id: 'bare', description: 'flywheel', hostNodes: ['SpinUp'] },
    ])
    expect(await fillMissingDocuments(t.deps.db)).toBe(2)
    await t.deps.db.deleteFrom('node_search_keywords').where('node_id', '=', 'bare').execute()
    await t.deps.db.deleteFrom('node_search_host_names').where('node_id', '=', 'bare').execute()
    expect(await staleSearchTexts(t.deps.db)).toEqual(['bare'])
    expect(await fillMissingDocuments(t.deps.db)).toBe(1)
    expect(await staleSearchTexts(t.deps.db)).toEqual([])
    expect(await fillMissingDocuments(t.deps.db)).toBe(0)
  })

  test('lets waiting work in between pages of its scan, also when nothing is missing', async () => {
    await seedNodes(
      t.deps.db,
      Array.from({ length: 1501 }, (_, i) => ({ id: `node-${String(i).padStart(4, '0')}` })),
    )
    await fillMissingDocuments(t.deps.db)
    // Each statement made to take 5 ms, past the 4 ms after which work breathes: four pages of 500 ids, none with
    // anything to write, give the ticker a turn after each of the first three at least.
    const slow: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        const until = performance.now() + 5
        while (performance.now() < until);
        return args.result
      },
    }
    expect(await turnsDuring(() => fillMissingDocuments(t.deps.db.withPlugin(slow)))).toBeGreaterThanOrEqual(3)
  })

  test('a write landing while a batch is written is never undone by it', async () => {
    await seedNodes(t.deps.db, [{ id: 'pack', description: 'old' }])
    let write: Promise<void> | undefined
    // Right after the fill has read the node's row, a write changes it, and the fill goes on once that write has
    // committed, or after 200 ms: the write waits for the batch on SQLite, and for the batch's lock on the row on
    // PostgreSQL (without it, the write would commit first and the batch then store a document of the old row).
    const racing = t.deps.db.withPlugin({
      transformQuery: (args) => args.node,
      async transformResult(args) {
        if (!write && args.result.rows.some((row) => (row as { description?: string }).description === 'old')) {
          write = commitWrite(t.deps, async (w) => {
            await w.db.updateTable('nodes').set({ description: 'new' }).where('id', '=', 'pack').execute()
            w.node('pack')
          })
          await Promise.race([write, Bun.sleep(200)])
        }
        return args.result
      },
    })
    expect(await fillMissingDocuments(racing)).toBe(1)
    await write
    expect(JSON.parse((await stored(t.deps.db))[0]!.node_json).description).toBe('new')
  })

  test('stops between batches when asked', async () => {
    await seedNodes(
      t.deps.db,
      Array.from({ length: 300 }, (_, i) => ({ id: `node-${i}` })),
    )
    // Asked before the first page and before each batch: the third time, after one batch.
    let asked = 0
    expect(await fillMissingDocuments(t.deps.db, () => ++asked > 2)).toBe(100)
  })
})
