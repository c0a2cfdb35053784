/** Mirroring the public registry (no feed), from a stand-in that plays its exact shapes and misbehaves on demand. */
import { afterEach, describe, expect, test } from 'bun:test'
import * as v from 'valibot'
import { makeZip } from '../support/archives'
import { makeTestApp, storedBlobs, type TestApp } from '../support/app'
import { fastHttp, sync } from '../support/mirror'
import { fakeNodes, startPublicUpstream, type PublicUpstream } from '../support/public-upstream'

let upstream: PublicUpstream
let mirror: TestApp
afterEach(async () => {
  upstream?.stop()
  await mirror?.cleanup()
})

const ids = (page: { nodes: { id: string }[] }) => page.nodes.map((n) => n.id).sort()

describe('sync from the public registry', () => {
  test('pages every node, reads versions and host node names, and maps the upstream spellings to ours', async () => {
    upstream = startPublicUpstream(fakeNodes(60))
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url)
    expect(summary).toMatchObject({ kind: 'public', complete: true, full: true, problems: [] })
    expect(summary.changed.nodes).toBe(60)
    expect(summary.changed.versions).toBe(120)
    // Pages of the clamped size (50), with include_banned so that bans are seen rather than taken for deletions.
    expect(upstream.requests.filter((r) => r.startsWith('/nodes?'))).toEqual([
      '/nodes?page=1&limit=1000&include_banned=true',
      '/nodes?page=2&limit=1000&include_banned=true',
    ])
    const first = upstream.nodes[1]!
    const node = (await mirror.call('GET', `/nodes/${first.id}`)).body
    expect(node).toMatchObject({
      id: first.id,
      name: first.name,
      repohost_stars: first.stars,
      github_stars: first.stars,
      downloads: 10 * first.stars,
      rating: 4.5,
      supported_hostui_version: '>=0.3.0',
      supported_comfyui_version: '>=0.3.0',
      supported_os: [],
      translations: {},
      created_at: first.createdAt, // microseconds read, stored with milliseconds
      license: '{"file": "LICENSE"}',
      publisher: { id: first.publisher, status: 'PublisherStatusActive' },
      latest_version: { version: '1.1.0', status: 'NodeVersionStatusActive', comfy_node_extract_status: 'success' },
    })
    const versions = (await mirror.call('GET', `/nodes/${first.id}/versions`)).body
    expect(versions.map((v: any) => [v.version, v.changelog, v.dependencies, v.supported_os])).toEqual([
      ['1.1.0', 'release 1', ['numpy'], ['OS Independent']],
      ['1.0.0', '', ['numpy'], ['OS Independent']],
    ])
    // Host node names of the latest active version, from the upstream's comfy-nodes listing.
    const name = first.versions[1]!.hostNodes[0]!
    expect((await mirror.call('GET', `/nodes/search?host_node_search=${name}`)).body.nodes.map((n: any) => n.id)).toContain(first.id)
    expect(upstream.requests.filter((r) => r.includes('/comfy-nodes')).length).toBe(60)
  })

  test('incremental runs ask for what changed since the last run, less an overlap window', async () => {
    upstream = startPublicUpstream(fakeNodes(10))
    mirror = await makeTestApp()
    await sync(mirror, upstream.url)
    upstream.requests.length = 0
    const quiet = await sync(mirror, upstream.url)
    expect(quiet).toMatchObject({ complete: true, full: false, changed: { publishers: 0, nodes: 0, versions: 0, removed: 0 } })
    const overlap = new Date(mirror.clock.now.getTime() - 60 * 60_000).toISOString()
    expect(upstream.requests).toEqual([`/nodes?page=1&limit=1000&include_banned=true&timestamp=${encodeURIComponent(overlap)}`])

    const changed = upstream.nodes[3]!
    changed.updatedAt = '2026-06-01T00:00:00.000Z'
    changed.description = 'now better'
    changed.versions.push({ ...changed.versions[0]!, id: crypto.randomUUID(), version: '2.0.0', createdAt: '2026-06-01T00:00:00.000Z' })
    upstream.requests.length = 0
    const after = await sync(mirror, upstream.url)
    expect(after.changed).toMatchObject({ nodes: 1, versions: 1 })
    expect(upstream.requests.filter((r) => r.includes('/versions?'))).toEqual([expect.stringContaining(`/nodes/${changed.id}/versions?`)])
    expect((await mirror.call('GET', `/nodes/${changed.id}`)).body).toMatchObject({
      description: 'now better',
      latest_version: { version: '2.0.0' },
    })
  })

  test('a full pass records a node deleted upstream, and a version gone from its list, as gone here', async () => {
    upstream = startPublicUpstream(fakeNodes(8))
    mirror = await makeTestApp()
    await sync(mirror, upstream.url)
    const [gone] = upstream.nodes.splice(2, 1)
    const kept = upstream.nodes[0]!
    kept.versions.pop()
    const incremental = await sync(mirror, upstream.url)
    expect(incremental.changed.removed).toBe(0) // the lists do not show deletions
    const full = await sync(mirror, upstream.url, { full: true })
    expect(full).toMatchObject({ complete: true, full: true })
    expect(full.changed.removed).toBe(2)
    expect((await mirror.call('GET', `/nodes/${gone!.id}`)).status).toBe(404)
    expect((await mirror.call('GET', `/nodes/${kept.id}/versions/1.1.0`)).status).toBe(404)
    expect((await mirror.call('GET', `/nodes/${kept.id}`)).body.latest_version.version).toBe('1.0.0')
  })

  test('a malformed item is reported and skipped; the rest is mirrored', async () => {
    upstream = startPublicUpstream(fakeNodes(5))
    upstream.nodes[2]!.raw = { id: upstream.nodes[2]!.id, name: 'x', downloads: 'lots', publisher: { id: 'p', name: 'p' } }
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url)
    expect(summary.complete).toBe(true)
    expect(summary.problems).toEqual([
      { kind: 'node', id: upstream.nodes[2]!.id, reason: 'malformed node: downloads: Invalid type: Expected number but received "lots"' },
    ])
    expect(ids((await mirror.call('GET', '/nodes?limit=100')).body)).toEqual(
      upstream.nodes
        .filter((_, i) => i !== 2)
        .map((n) => n.id)
        .sort(),
    )
  })
})

describe('text no store can keep', () => {
  test('an item holding NUL is reported and skipped, on either backend; the rest is mirrored', async () => {
    upstream = startPublicUpstream(fakeNodes(5))
    const [, holding, , withVersion] = upstream.nodes
    holding!.description = 'before\u0000after'
    withVersion!.versions[0]!.changelog = 'fixed\u0000'
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url)
    expect(summary.complete).toBe(true)
    const nul = 'holds a NUL character (U+0000), which no store can keep'
    expect(summary.problems).toEqual([
      { kind: 'node', id: holding!.id, reason: `description ${nul}` },
      { kind: 'version', id: withVersion!.versions[0]!.id, reason: `changelog ${nul}` },
      ...holding!.versions.map(() => ({
        kind: 'version' as const,
        id: expect.any(String),
        reason: `its node "${holding!.id}" was skipped`,
      })),
    ])
    expect(ids((await mirror.call('GET', '/nodes?limit=100')).body)).toEqual(
      upstream.nodes
        .filter((n) => n !== holding)
        .map((n) => n.id)
        .sort(),
    )
    const versions = (await mirror.call('GET', `/nodes/${withVersion!.id}/versions`)).body as { version: string }[]
    expect(versions.map((v) => v.version)).toEqual([withVersion!.versions[1]!.version])
  })
})

describe('an upstream that misbehaves', () => {
  test("stopping a run cuts its retry's wait short: it ends at once, saying it was stopped", async () => {
    const failing = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('down', { status: 500 }) })
    try {
      const stop = new AbortController()
      const { http } = fastHttp({
        signal: stop.signal,
        attempts: 9,
        // A wait that never ends by itself (the real one backs off up to 30 s): only the stop, during it, can end it.
        sleep: () => new Promise(() => {}),
        onRetry: () => void setTimeout(() => stop.abort(), 5),
      })
      expect(await http.json(`${failing.url}nodes`, v.unknown()).catch((err) => err)).toMatchObject({ kind: 'aborted' })
    } finally {
      failing.stop(true)
    }
  })

  test('500s, 429 with Retry-After, cut-off bodies, stalls and resets are retried until the run completes', async () => {
    upstream = startPublicUpstream(fakeNodes(6))
    upstream.fault(/^\/nodes\?/, { kind: 'status', status: 500 }, 2)
    upstream.fault(/^\/nodes\?/, { kind: 'retry-after', seconds: 7 })
    upstream.fault(/\/versions\?/, { kind: 'truncate' })
    upstream.fault(/\/versions\?/, { kind: 'stall' })
    upstream.fault(/\/comfy-nodes/, { kind: 'status', status: 502 })
    upstream.fault(/\/storage\//, { kind: 'truncate' })
    upstream.fault(/\/storage\//, { kind: 'reset' })
    upstream.fault(/\/storage\//, { kind: 'stall' })
    upstream.fault(/\/storage\//, { kind: 'status', status: 503 })
    mirror = await makeTestApp()
    const { http, waits } = fastHttp({ timeoutMs: 300 })
    const summary = await sync(mirror, upstream.url, { http, archives: 'eager' })
    expect(summary).toMatchObject({ complete: true, problems: [], archives: { fetched: 12, refused: 0, failed: 0 } })
    expect(waits.some((ms) => ms >= 7000)).toBe(true) // Retry-After honoured
    expect(waits).toHaveLength(10) // one retry per fault
    expect((await mirror.call('GET', '/nodes')).body.total).toBe(6)
    // Nothing partial was kept: only whole archives, each once.
    const files = [...new Bun.Glob('**/*').scanSync({ cwd: mirror.dir, onlyFiles: true })]
    expect(files.filter((f) => f.startsWith('tmp/'))).toEqual([])
    expect(await storedBlobs(mirror)).toHaveLength(12)
  })

  test('changed archive bytes for a pinned version are refused and reported; the pinned bytes stay served', async () => {
    upstream = startPublicUpstream(fakeNodes(2))
    mirror = await makeTestApp()
    await sync(mirror, upstream.url, { archives: 'eager' })
    const node = upstream.nodes[0]!
    const original = node.versions[0]!.archive!
    node.versions[0]!.archive = makeZip([{ name: '__init__.py', data: 'NODE_CLASS_MAPPINGS = {}\n# tampered\n' }])
    const summary = await sync(mirror, upstream.url, { archives: 'eager', full: true })
    expect(summary.archives.refused).toBe(1)
    expect(summary.problems).toEqual([
      {
        kind: 'archive',
        id: `${node.id}@1.0.0`,
        reason: expect.stringMatching(/^the upstream now serves other bytes .* than the ones pinned .*: refused$/),
      },
    ])
    const res = await mirror.app.request(`/archives/${node.publisher}/${node.id}/1.0.0/node.zip`)
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(original)
    // The refusal is recorded for the operator (and the web page).
    const problems = () => mirror.deps.db.selectFrom('mirror_archives').select('problem').where('problem', '!=', '').execute()
    expect((await problems())[0]!.problem).toContain('refused')
    // Put right upstream: an incremental run leaves the refusal alone, the next full pass finds the pinned bytes again.
    node.versions[0]!.archive = original
    expect((await sync(mirror, upstream.url, { archives: 'eager' })).problems).toEqual([])
    expect(await problems()).toHaveLength(1)
    expect(await sync(mirror, upstream.url, { archives: 'eager', full: true })).toMatchObject({ problems: [], archives: { refused: 0 } })
    expect(await problems()).toEqual([])
  })

  test('an archive gone upstream (404) is a reported problem; one refused (403) a failure; the next run fetches both', async () => {
    upstream = startPublicUpstream(fakeNodes(2))
    const [gone, refused] = upstream.nodes
    const archiveOf = (id: string) => new RegExp(`^/storage/.*/${id}/1\\.0\\.0/node\\.zip$`)
    upstream.fault(archiveOf(gone!.id), { kind: 'status', status: 404 })
    upstream.fault(archiveOf(refused!.id), { kind: 'status', status: 403 })
    mirror = await makeTestApp()
    expect(await sync(mirror, upstream.url, { archives: 'eager' })).toMatchObject({
      // An upstream refusing archives must not pass for a complete mirror; one that lost one has done what it can.
      complete: false,
      problems: [{ kind: 'archive', id: `${gone!.id}@1.0.0`, reason: 'the upstream has no such archive (HTTP 404)' }],
      archives: { fetched: 2, failed: 1 },
    })
    expect(await sync(mirror, upstream.url, { archives: 'eager' })).toMatchObject({
      complete: true,
      problems: [],
      archives: { fetched: 2 },
    })
  })

  test('an archive refused on its first fetch is fetched again by the next full pass, once the upstream put it right', async () => {
    upstream = startPublicUpstream(fakeNodes(2))
    const node = upstream.nodes[0]!
    const good = node.versions[0]!.archive!
    node.versions[0]!.archive = new TextEncoder().encode('not an archive at all')
    mirror = await makeTestApp()
    expect((await sync(mirror, upstream.url, { archives: 'eager' })).archives).toMatchObject({ refused: 1 })
    const install = () => mirror.call('GET', `/nodes/${node.id}/install?version=1.0.0`)
    expect((await install()).status).toBe(404)
    node.versions[0]!.archive = good
    expect((await sync(mirror, upstream.url, { archives: 'eager' })).archives).toMatchObject({ fetched: 0, refused: 0 })
    expect(await sync(mirror, upstream.url, { archives: 'eager', full: true })).toMatchObject({ problems: [], archives: { fetched: 1 } })
    expect((await install()).status).toBe(200)
    const res = await mirror.app.request(`/archives/${node.publisher}/${node.id}/1.0.0/node.zip`)
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(good)
  })

  test('an unreachable upstream ends the run incomplete, saying why, and leaves the mirror as it was', async () => {
    upstream = startPublicUpstream(fakeNodes(3))
    mirror = await makeTestApp()
    await sync(mirror, upstream.url)
    upstream.stop()
    const summary = await sync(mirror, upstream.url)
    expect(summary).toMatchObject({ complete: false, unreachable: true, reason: expect.stringContaining('cannot connect') })
    expect((await mirror.call('GET', '/nodes')).body.total).toBe(3)
    const source = await mirror.deps.db.selectFrom('mirror_sources').selectAll().executeTakeFirstOrThrow()
    expect(source.last_error).toContain('cannot connect')
  })
})
