/** --read-only: every route that could write is refused (also routes added later), reads and installs are served, nothing changes. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { isSpecified, SPEC } from '../../src/http/route-spec'
import { loadFixture } from '../../src/services/fixture'
import { feedPosition } from '../../src/store/changes'
import { makeTestApp, type TestApp } from '../support/app'

const EXAMPLE = readFileSync(new URL('../fixtures/example-fixture.json', import.meta.url), 'utf8')
const ADMIN = 'ci-token-admin-000000000000003'
const PAT = 'ci-pat-acme-00000000000000001'

let t: TestApp
beforeEach(async () => {
  t = await makeTestApp({ settings: { readOnly: true } })
  // The fixture is the operator's own write: read-only refuses clients, not it.
  const loaded = await loadFixture(t.deps, EXAMPLE)
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'))
})
afterEach(() => t.cleanup())

const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS', 'ALL']
/** Path parameters filled with values that exist in the example fixture. */
const SAMPLE: Record<string, string> = { publisherId: 'acme', nodeId: 'blur-pack', version: '1.0.0', tokenId: 'x', versionId: 'x' }
const fill = (path: string) => path.replace(/:(\w+)/g, (_, name: string) => SAMPLE[name] ?? 'x')

describe('--read-only', () => {
  test('every route whose method can write is refused with 403 read_only, as admin too, and nothing changes', async () => {
    // Every handler of a route is listed; a route is safe when its spec says so.
    const routes = new Map<string, { method: string; path: string; safe: boolean }>()
    for (const r of t.app.routes.filter((r) => !SAFE_METHODS.includes(r.method))) {
      const key = `${r.method} ${r.path}`
      const safe = isSpecified(r.handler) && r.handler[SPEC].safe === true
      routes.set(key, { method: r.method, path: r.path, safe: safe || (routes.get(key)?.safe ?? false) })
    }
    const writes = [...routes.values()].filter((r) => !r.safe)
    expect(writes.length).toBeGreaterThanOrEqual(10)
    const feed = await feedPosition(t.deps.db)
    for (const r of writes) {
      const res = await t.call(r.method, fill(r.path), {
        token: ADMIN,
        body: { personal_access_token: PAT, node_version: { version: '9.0.0' } },
      })
      expect(`${r.method} ${r.path}: ${res.status} ${res.body?.error}`).toBe(`${r.method} ${r.path}: 403 read_only`)
    }
    expect(await feedPosition(t.deps.db)).toEqual(feed)
  })

  test('a route that only reads although it is a POST is served', async () => {
    const safe = t.app.routes.filter((r) => isSpecified(r.handler) && r.handler[SPEC].safe).map((r) => `${r.method} ${r.path}`)
    expect(safe).toEqual(['POST /bulk/nodes/versions'])
    const res = await t.call('POST', '/bulk/nodes/versions', { body: { node_versions: [{ node_id: 'blur-pack', version: '1.0.0' }] } })
    expect(res.body.node_versions[0]).toMatchObject({ status: 'success', node_version: { version: '1.0.0' } })
  })

  test('an unknown path with a writing method is refused too, before anything is read', async () => {
    expect(await t.call('DELETE', '/nodes/blur-pack')).toMatchObject({ status: 403, body: { error: 'read_only' } })
    expect(await t.call('POST', '/nope', { body: 'not json' })).toMatchObject({ status: 403, body: { error: 'read_only' } })
  })

  test('installs are served and downloads work, without counting', async () => {
    const feed = await feedPosition(t.deps.db)
    const install = await t.call('GET', '/nodes/blur-pack/install')
    expect(install.body).toMatchObject({
      version: '1.0.0',
      downloadUrl: expect.stringContaining('/archives/acme/blur-pack/1.0.0/node.zip'),
    })
    expect((await t.call('GET', '/nodes/blur-pack/install?version=1.0.0')).status).toBe(200)
    expect((await t.app.request('/archives/acme/blur-pack/1.0.0/node.zip')).status).toBe(200)
    expect((await t.call('GET', '/nodes/blur-pack')).body.downloads).toBe(1000)
    expect(await feedPosition(t.deps.db)).toEqual(feed)
  })

  test('searches, lists and reads answer as usual', async () => {
    expect((await t.call('GET', '/nodes/search?search=blur')).body.nodes.map((n: any) => n.id)).toEqual(['blur-pack'])
    expect((await t.call('GET', '/nodes')).body.total).toBe(2)
    expect((await t.call('GET', '/publishers/acme')).status).toBe(200)
    expect((await t.call('GET', '/users', { token: ADMIN })).body.id).toBe('root')
    expect((await t.call('GET', '/ready')).status).toBe(200)
  })

  test('CORS preflights still answer, and refusals carry CORS headers', async () => {
    const preflight = await t.app.request('/publishers', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    })
    expect(preflight.status).toBe(204)
    const refused = await t.app.request('/publishers', { method: 'POST', headers: { origin: 'https://app.example' } })
    expect(refused.status).toBe(403)
    expect(refused.headers.get('access-control-allow-origin')).toBe('*')
  })

  test('without --read-only the same requests write', async () => {
    t.deps.settings.readOnly = false
    expect((await t.call('POST', '/nodes/blur-pack/reviews?star=5')).status).toBe(200)
    await t.call('GET', '/nodes/blur-pack/install')
    await t.deps.downloads.flush() // counted in memory, written at most a second later
    expect((await t.call('GET', '/nodes/blur-pack')).body.downloads).toBe(1001)
  })
})
