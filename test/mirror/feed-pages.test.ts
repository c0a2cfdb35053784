/**
 * A feed of several pages: read ahead, applied in batches, exact (versions listed before their node included);
 * a page that fails ends the run cleanly, and so does a stop (the reader's request under way is abandoned).
 */
import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { join, resolve } from 'node:path'
import { commitWrite } from '../../src/services/changes'
import { fetchFeedPage } from '../../src/upstream/feed-client'
import { readFeed } from '../../src/upstream/feed-reader'
import { makeTestApp, type TestApp } from '../support/app'
import { fastHttp, seedNodes, serveTestApp, sync, type ServedApp } from '../support/mirror'
import { tempDirs } from '../support/tmp'

let upstream: ServedApp
let mirror: TestApp | undefined
const dirs = tempDirs('feed-pages')
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
  mirror = undefined
  dirs.cleanup()
})

/** Edits nodes: they move to the end of the feed, after their versions (which a mirror then holds until they come). */
async function editNodes(t: TestApp, ids: string[]) {
  await commitWrite(t.deps, async (w) => {
    for (const id of ids) {
      await w.db
        .updateTable('nodes')
        .set({ description: `edited ${id}`, updated_at: w.now })
        .where('id', '=', id)
        .execute()
      w.node(id)
    }
  })
}

/** Answers the feed's page after `from` (and those after it) with a body that never ends; resolves when it is asked for. */
function stallFrom(target: ServedApp, from: number) {
  const { promise: requested, resolve: asked } = Promise.withResolvers<void>()
  const { promise: dropped, resolve: abandoned } = Promise.withResolvers<void>()
  target.intercept = (url, req) => {
    if (url.pathname !== '/changes' || Number(url.searchParams.get('since')) < from) return undefined
    req.signal.addEventListener('abort', () => abandoned())
    asked()
    return new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"instance":')) }), {
      headers: { 'content-type': 'application/json' },
    })
  }
  return { requested, dropped }
}

const NODES = 600
const VERSIONS = 4
const ENTITIES = 1 + NODES + NODES * VERSIONS // over three pages of 1,000

async function counts(t: TestApp) {
  const n = async (table: 'nodes' | 'node_versions' | 'host_nodes' | 'changes') =>
    Number(
      (
        await t.deps.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  return { nodes: await n('nodes'), versions: await n('node_versions'), hostNodes: await n('host_nodes'), feed: await n('changes') }
}

describe('a feed of several pages', () => {
  test('is mirrored exactly: every entity once, rendered alike, in the local feed too; a second run changes nothing', async () => {
    upstream = await serveTestApp()
    await seedNodes(upstream, NODES, VERSIONS)
    const edited = ['bulk-pack-7', 'bulk-pack-321', `bulk-pack-${NODES - 1}`]
    await editNodes(upstream, edited)
    mirror = await makeTestApp()
    const first = await sync(mirror, upstream.url)
    expect(first).toMatchObject({ complete: true, problems: [], changed: { publishers: 1, nodes: NODES, versions: NODES * VERSIONS } })
    expect(upstream.requests.filter((p) => p === '/changes').length).toBeGreaterThanOrEqual(5) // the probe, then four pages
    expect(await counts(mirror)).toEqual({ nodes: NODES, versions: NODES * VERSIONS, hostNodes: NODES, feed: ENTITIES })
    for (const id of ['bulk-pack-0', ...edited]) {
      const node = (await mirror.call('GET', `/nodes/${id}`)).body
      expect(node).toEqual({ ...(await upstream.call('GET', `/nodes/${id}`)).body, latest_version: expect.anything() })
      expect(node.latest_version.version).toBe(`1.${VERSIONS - 1}.0`)
    }
    const hostNode = (await mirror.call('GET', '/nodes/search?host_node_search=BulkNode321')).body.nodes.map((n: any) => n.id)
    expect(hostNode).toEqual(['bulk-pack-321'])
    const head = (await upstream.call('GET', '/changes?limit=1')).body.head
    const source = await mirror.deps.db.selectFrom('mirror_sources').selectAll().executeTakeFirstOrThrow()
    expect(source.cursor_serial).toBe(head)

    const second = await sync(mirror, upstream.url)
    expect(second).toMatchObject({ complete: true, changed: { publishers: 0, nodes: 0, versions: 0, removed: 0 } })
    expect((await counts(mirror)).feed).toBe(ENTITIES)
  })

  test('a page the upstream fails to serve ends the run with the reason; what was applied stays, and the next run finishes', async () => {
    upstream = await serveTestApp()
    await seedNodes(upstream, NODES, VERSIONS)
    const pageTwo = (await upstream.call('GET', '/changes?limit=1000')).body.next
    upstream.intercept = (url) =>
      url.pathname === '/changes' && Number(url.searchParams.get('since')) >= pageTwo ? new Response('down', { status: 503 }) : undefined
    mirror = await makeTestApp()
    const failed = await sync(mirror, upstream.url)
    expect(failed).toMatchObject({ complete: false, unreachable: true, reason: expect.stringContaining('HTTP 503') })
    const partial = await counts(mirror)
    expect(partial.nodes).toBe(NODES) // the first page: the publisher, every node and some versions
    expect(partial.versions).toBeLessThan(NODES * VERSIONS)
    const source = await mirror.deps.db.selectFrom('mirror_sources').selectAll().executeTakeFirstOrThrow()
    expect(source.cursor_serial).toBe(pageTwo)

    upstream.intercept = undefined
    const resumed = await sync(mirror, upstream.url)
    expect(resumed).toMatchObject({ complete: true, problems: [], changed: { nodes: 0, versions: NODES * VERSIONS - partial.versions } })
    expect(await counts(mirror)).toEqual({ nodes: NODES, versions: NODES * VERSIONS, hostNodes: NODES, feed: ENTITIES })
  })

  test('a page that is not a feed page is refused at once, not tried again', async () => {
    upstream = await serveTestApp()
    await seedNodes(upstream, NODES, VERSIONS)
    const pageTwo = (await upstream.call('GET', '/changes?limit=1000')).body.next
    upstream.intercept = (url) =>
      url.pathname === '/changes' && Number(url.searchParams.get('since')) >= pageTwo
        ? Response.json({ instance: 'x', changes: [{ serial: 'one' }], next: 0, head: 0 })
        : undefined
    mirror = await makeTestApp()
    const failed = await sync(mirror, upstream.url)
    expect(failed).toMatchObject({
      complete: false,
      unreachable: false,
      reason: expect.stringContaining('unexpected reply (changes.0.serial'),
    })
    expect(upstream.requests.filter((p) => p === '/changes')).toHaveLength(3) // the probe, page one, page two once
  })

  test('closing the reader abandons the request under way', async () => {
    upstream = await serveTestApp()
    await seedNodes(upstream, NODES, VERSIONS)
    const pageTwo = (await upstream.call('GET', '/changes?limit=1000')).body.next
    const stall = stallFrom(upstream, pageTwo)
    const { http } = fastHttp({ timeoutMs: 60_000 }) // only the close ends the stalled request
    const first = await fetchFeedPage(http, upstream.url, 0)
    const reader = readFeed(http, upstream.url, first, { ahead: 4 })
    expect((await reader.take(1, 1000)).map((p) => p.next)).toEqual([pageTwo])
    await stall.requested
    reader.close()
    await stall.dropped // else the test times out
    expect(await reader.take(1, 1000)).toEqual([])
  })

  test('a sync stopped (SIGTERM) while a page is under way exits at once, saying so; the next run completes it', async () => {
    upstream = await serveTestApp()
    await seedNodes(upstream, NODES, VERSIONS)
    const pageTwo = (await upstream.call('GET', '/changes?limit=1000')).body.next
    const stall = stallFrom(upstream, pageTwo)
    const dir = dirs.make()
    const run = () =>
      Bun.spawn([process.execPath, resolve(import.meta.dir, '../../src/main.ts'), 'sync', '--from', upstream.url, '--data', dir], {
        stdout: 'pipe',
        stderr: 'pipe',
      })
    const stopped = run()
    await stall.requested
    stopped.kill('SIGTERM')
    expect(await stopped.exited).toBe(1)
    expect(await new Response(stopped.stdout).text()).toMatch(/: incomplete: the run was stopped;/)
    await stall.dropped
    const db = new Database(join(dir, 'registry.db'), { readonly: true })
    const count = (table: string) => (db.query(`select count(*) as n from ${table}`).get() as { n: number }).n
    expect(count('nodes')).toBe(NODES) // the first page was applied
    db.close()

    upstream.intercept = undefined
    const again = run()
    expect(await again.exited).toBe(0)
    expect(await new Response(again.stdout).text()).toMatch(/: complete \(incremental\); 0 publishers, 0 nodes, [\d,]+ versions changed/)
    const after = new Database(join(dir, 'registry.db'), { readonly: true })
    expect((after.query('select count(*) as n from node_versions').get() as { n: number }).n).toBe(NODES * VERSIONS)
    after.close()
  }, 30_000)
})
