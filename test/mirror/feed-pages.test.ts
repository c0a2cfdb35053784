/** A feed of several pages: read ahead in a worker, applied in batches, exact; a page that fails ends the run cleanly. */
import { afterEach, describe, expect, test } from 'bun:test'
import { makeTestApp, type TestApp } from '../support/app'
import { seedNodes, serveTestApp, sync, type ServedApp } from '../support/mirror'

let upstream: ServedApp
let mirror: TestApp
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
})

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
    mirror = await makeTestApp()
    const first = await sync(mirror, upstream.url)
    expect(first).toMatchObject({ complete: true, problems: [], changed: { publishers: 1, nodes: NODES, versions: NODES * VERSIONS } })
    expect(upstream.requests.filter((p) => p === '/changes').length).toBeGreaterThanOrEqual(5) // the probe, then four pages
    expect(await counts(mirror)).toEqual({ nodes: NODES, versions: NODES * VERSIONS, hostNodes: NODES, feed: ENTITIES })
    for (const id of ['bulk-pack-0', 'bulk-pack-321', `bulk-pack-${NODES - 1}`]) {
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
})
