/** Mirroring from an upstream that is hostile rather than flaky: what it sends must cost neither the run nor our memory. */
import { afterEach, describe, expect, test } from 'bun:test'
import { makeZip } from '../support/archives'
import { makeTestApp, type TestApp } from '../support/app'
import { dripping } from '../support/dripping'
import { fastHttp, sync } from '../support/mirror'
import { fakeNodes, startPublicUpstream, type PublicUpstream } from '../support/public-upstream'
import { VERSION_LISTS_AT_ONCE } from '../../src/services/mirror/public-pass'

let upstream: PublicUpstream
let mirror: TestApp
afterEach(async () => {
  upstream?.stop()
  await mirror?.cleanup()
})

describe('memory', () => {
  test('a page is applied a group of version lists at a time, not after reading every list of the page', async () => {
    upstream = startPublicUpstream(fakeNodes(3 * VERSION_LISTS_AT_ONCE))
    mirror = await makeTestApp()
    const [first, last] = [upstream.nodes[0]!, upstream.nodes.at(-1)!]
    // When the last list is asked for, the first node's versions are stored already (their list no longer held).
    let firstStored: Promise<unknown> | undefined
    upstream.onRequest = (path) => {
      if (path.startsWith(`/nodes/${last.id}/versions?`))
        firstStored = mirror.deps.db.selectFrom('node_versions').select('id').where('node_id', '=', first.id).executeTakeFirst()
    }
    const summary = await sync(mirror, upstream.url)
    expect(summary).toMatchObject({ complete: true, problems: [], changed: { nodes: 3 * VERSION_LISTS_AT_ONCE } })
    expect(await firstStored).toBeDefined()
  })
})

describe('archives', () => {
  test('an archive over the upload limit is refused and reported; the run completes and the others are stored', async () => {
    upstream = startPublicUpstream(fakeNodes(2, 1))
    const big = upstream.nodes[0]!
    big.versions[0]!.archive = makeZip([{ name: 'weights.bin', data: crypto.getRandomValues(new Uint8Array(60_000)) }])
    mirror = await makeTestApp({ settings: { maxUploadBytes: 50_000 } })
    const summary = await sync(mirror, upstream.url, { archives: 'eager' })
    expect(summary).toMatchObject({ complete: true, archives: { fetched: 1, refused: 1, failed: 0 } })
    expect(summary.problems).toEqual([
      { kind: 'archive', id: `${big.id}@1.0.0`, reason: 'archive is larger than the limit of 50000 bytes' },
    ])
    const kept = upstream.nodes[1]!
    expect((await mirror.call('GET', `/nodes/${kept.id}/install?version=1.0.0`)).status).toBe(200)
    // A full pass checking the stored archive, now too large upstream, refuses it the same way and keeps the pinned bytes.
    kept.versions[0]!.archive = big.versions[0]!.archive
    const full = await sync(mirror, upstream.url, { archives: 'eager', full: true })
    expect(full).toMatchObject({ complete: true, archives: { refused: 2, failed: 0 } })
    expect(full.problems.map((p) => p.reason)).toContain(
      'the upstream now serves other bytes: archive is larger than the limit of 50000 bytes',
    )
    expect((await mirror.call('GET', `/nodes/${kept.id}/install?version=1.0.0`)).status).toBe(200)
  })
})

describe('ids', () => {
  test('two nodes of one page whose ids differ only in case: the first is mirrored, the other reported', async () => {
    upstream = startPublicUpstream(fakeNodes(3, 1))
    const [first, clash, other] = upstream.nodes
    clash!.id = first!.id.toUpperCase()
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url)
    expect(summary).toMatchObject({ complete: true, changed: { nodes: 2, versions: 2 } })
    expect(summary.problems).toEqual([
      { kind: 'node', id: clash!.id, reason: `a node "${first!.id}" comes first from the upstream (ids are unique ignoring case)` },
      { kind: 'version', id: clash!.versions[0]!.id, reason: `its node "${clash!.id}" was skipped` },
    ])
    expect((await mirror.call('GET', `/nodes/${first!.id}`)).body.name).toBe(first!.name)
    expect((await mirror.call('GET', `/nodes/${other!.id}`)).status).toBe(200)
  })

  test('"." and ".." as node, publisher or version ids are reported and skipped (URLs would drop them); the rest is mirrored', async () => {
    upstream = startPublicUpstream(fakeNodes(5, 1))
    const [dot, dotdot, byDots, withDots, fine] = upstream.nodes
    dot!.id = '.'
    dotdot!.id = '..'
    byDots!.publisher = '..'
    withDots!.versions[0]!.version = '..'
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url)
    expect(summary).toMatchObject({ complete: true, changed: { nodes: 2, versions: 1 } })
    expect(summary.problems).toEqual([
      { kind: 'node', id: '.', reason: 'malformed node: id: is not a usable id' },
      { kind: 'node', id: '..', reason: 'malformed node: id: is not a usable id' },
      { kind: 'node', id: byDots!.id, reason: 'malformed node: publisher: id: is not a usable id' },
      { kind: 'version', id: withDots!.versions[0]!.id, reason: `malformed version of "${withDots!.id}": version: is a dot segment` },
    ])
    expect((await mirror.call('GET', `/nodes/${fine!.id}/versions`)).body).toHaveLength(1)
    const stored = await mirror.deps.db.selectFrom('publishers').select('id').where('id', 'in', ['.', '..']).execute()
    expect(stored).toEqual([])
  })
})

/** An upstream of one node, `page` making each reply to GET /nodes; every request's path is recorded. */
function startRepeatingUpstream(page: (n: number) => object) {
  const requests: string[] = []
  const node = { id: 'loop-node', name: 'Loop', publisher: { id: 'looper', name: 'Looper' } } // no created_at, as some send
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url)
      requests.push(url.pathname + url.search)
      if (url.pathname === '/nodes') return Response.json({ nodes: [node], ...page(Number(url.searchParams.get('page'))) })
      if (url.pathname === '/nodes/loop-node/versions') return Response.json([])
      if (url.pathname === '/nodes/loop-node') return Response.json(node)
      return Response.json({ message: 'Not Found' }, { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) }
}

describe('paging', () => {
  test('an upstream claiming a trillion pages of the same node is paged once: the repeat ends the pass, reported', async () => {
    const looping = startRepeatingUpstream((page) => ({ total: 1e12, page, limit: 1, totalPages: 1e12 }))
    try {
      mirror = await makeTestApp()
      const summary = await sync(mirror, looping.url)
      expect(summary).toMatchObject({ complete: true, changed: { nodes: 1 } })
      expect(summary.problems).toEqual([
        { kind: 'page', id: '2', reason: 'the upstream lists only nodes it listed on earlier pages: paging stopped' },
      ])
      expect(looping.requests.filter((r) => r.startsWith('/nodes?')).length).toBe(2)
    } finally {
      looping.stop()
    }
  })

  test('no more pages than the total implies, and a node read again unchanged (no creation time sent) is no change', async () => {
    const upstream2 = startRepeatingUpstream((page) => ({ total: 1, page, limit: 1000, totalPages: 1e12 }))
    try {
      mirror = await makeTestApp()
      expect(await sync(mirror, upstream2.url)).toMatchObject({ complete: true, problems: [], changed: { nodes: 1 } })
      const created = (await mirror.call('GET', '/nodes/loop-node')).body.created_at
      mirror.clock.now = new Date(mirror.clock.now.getTime() + 60_000)
      const again = await sync(mirror, upstream2.url, { full: true })
      expect(again).toMatchObject({ complete: true, problems: [], changed: { publishers: 0, nodes: 0, versions: 0 } })
      expect((await mirror.call('GET', '/nodes/loop-node')).body.created_at).toBe(created)
      expect(upstream2.requests.filter((r) => r.startsWith('/nodes?')).length).toBe(2) // one page per run
    } finally {
      upstream2.stop()
    }
  })
})

describe('versions', () => {
  test('one version id listed under two nodes of a batch: the first node keeps it, the other is reported', async () => {
    upstream = startPublicUpstream(fakeNodes(2, 1))
    const [owner, other] = upstream.nodes
    const shared = owner!.versions[0]!.id
    other!.versions[0]!.id = shared
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url)
    expect(summary).toMatchObject({ complete: true, changed: { nodes: 2, versions: 1 } })
    expect(summary.problems).toEqual([
      { kind: 'version', id: shared, reason: `it belongs to node "${owner!.id}", not "${other!.id}" (listed under both)` },
    ])
    expect((await mirror.call('GET', `/nodes/${owner!.id}/versions`)).body.map((v: any) => v.id)).toEqual([shared])
  })
})

describe('slow replies', () => {
  test('a JSON reply dripping a byte at a time fails within its whole-reply limit (4 timeouts), like a timeout', async () => {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => dripping('{"nodes": [') })
    try {
      mirror = await makeTestApp()
      const started = performance.now()
      const summary = await sync(mirror, `http://127.0.0.1:${server.port}`, { http: fastHttp({ timeoutMs: 200, attempts: 2 }).http })
      expect(summary).toMatchObject({ complete: false, unreachable: true })
      expect(summary.reason).toContain('the reply took longer than 800 ms (after 2 tries)')
      expect(performance.now() - started).toBeLessThan(5_000)
    } finally {
      server.stop(true)
    }
  })
})
