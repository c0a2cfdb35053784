import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/http/app'
import { aliceWithPublisher, makeTestApp, publish, publishActive, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

describe('system endpoints', () => {
  test('GET /health and /ready', async () => {
    expect(await t.call('GET', '/health')).toMatchObject({ status: 200, body: { status: 'ok' } })
    const ready = await t.call('GET', '/ready')
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({ status: 'ready', database: 'ok', storage: 'ok', search: { ready: true } })
  })

  test('GET /openapi describes every served path', async () => {
    const res = await t.call('GET', '/openapi')
    expect(res.body.openapi).toStartWith('3.')
    for (const path of [
      '/nodes/search',
      '/publishers/{publisherId}/nodes/{nodeId}/versions',
      '/nodes/{nodeId}/install',
      '/users',
      '/bulk/nodes/versions',
      '/archives/{publisherId}/{nodeId}/{version}/node.zip',
    ]) {
      expect(res.body.paths[path]).toBeDefined()
    }
    expect(res.body.components.schemas.ErrorResponse.required).toEqual(['error', 'message'])
  })

  test('HEAD states the length GET sends, over a real server, and sends no body', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'head-node', version: '1.0.0' })
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: t.app.fetch })
    try {
      for (const path of ['/health', '/', '/nodes', '/nodes/head-node', '/openapi', '/archives/acme/head-node/1.0.0/node.zip']) {
        const get = await fetch(new URL(path, server.url))
        const sent = (await get.arrayBuffer()).byteLength
        const head = await fetch(new URL(path, server.url), { method: 'HEAD' })
        expect({ path, status: head.status, length: head.headers.get('content-length') }).toEqual({
          path,
          status: get.status,
          length: String(sent),
        })
        expect((await head.arrayBuffer()).byteLength).toBe(0)
        expect(sent).toBeGreaterThan(0)
      }
      const missing = await fetch(new URL('/nope', server.url), { method: 'HEAD' })
      expect(missing.status).toBe(404)
      expect(Number(missing.headers.get('content-length'))).toBeGreaterThan(0)
    } finally {
      server.stop(true)
    }
  })

  test('unknown routes answer 404 with the error shape', async () => {
    expect(await t.call('GET', '/nope')).toMatchObject({ status: 404, body: { error: 'not_found', message: 'No route for GET /nope' } })
  })

  test('CORS: any origin, with the headers the web front end sends', async () => {
    const res = await t.app.request('/nodes/search', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://registry.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization,cache-control,pragma,expires',
      },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase()
    for (const h of ['authorization', 'content-type', 'cache-control', 'pragma', 'expires']) expect(allowed).toContain(h)
  })

  test('CORS headers on the answers themselves, errors included; a list of origins allows only those', async () => {
    for (const path of ['/nodes/search', '/nodes/nope']) {
      const res = await t.app.request(path, { headers: { origin: 'https://registry.example' } })
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(res.headers.get('access-control-expose-headers')).toContain('ETag')
      expect(res.headers.get('access-control-expose-headers')).toContain('X-Request-Id')
    }
    const listed = createApp(t.deps, { corsOrigin: 'https://a.example, https://b.example' })
    const allowed = await listed.request('/health', { headers: { origin: 'https://b.example' } })
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://b.example')
    expect(allowed.headers.get('vary')).toContain('Origin')
    const other = await listed.request('/health', { headers: { origin: 'https://a.exam' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('JSON bodies over 1 MiB get 413', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await t.call('POST', '/publishers/acme/nodes/pack/versions', {
      body: { personal_access_token: pat, node_version: { version: '1.0.0', changelog: 'x'.repeat(1_100_000) } },
    })
    expect(res.status).toBe(413)
    expect(res.body.error).toBe('payload_too_large')
  })
})

describe('credentials never reach logs or responses', () => {
  test('bearer tokens, publisher tokens and signatures are absent from every log line', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const signature = new URL(res.body.signedUrl).searchParams.get('signature')!
    await publishActive(t, { pat, node: 'pack', version: '1.1.0' })
    await t.call('GET', '/users', { token })
    await publish(t, { pat: `${pat}x`, node: 'pack', version: '2.0.0' })
    await t.call('GET', '/users', { token: `${token}x` })
    const logs = t.logs.join('\n')
    expect(t.logs.length).toBeGreaterThan(5)
    for (const secret of [token, pat, signature]) expect(logs).not.toContain(secret)
    expect(JSON.stringify(res.body)).not.toContain(pat)
  })

  test('tokens are stored only as hashes', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const rows = JSON.stringify([
      await t.deps.db.selectFrom('access_tokens').selectAll().execute(),
      await t.deps.db.selectFrom('publisher_tokens').selectAll().execute(),
    ])
    expect(rows).not.toContain(token)
    expect(rows).not.toContain(pat)
  })
})

describe('node list responses', () => {
  test('are served again from cache until a write, and gzipped (first asks too) only when enabled and accepted', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const plain = await t.app.request('/nodes?limit=5', { headers: { 'accept-encoding': 'gzip' } })
    expect(plain.headers.get('content-encoding')).toBeNull()
    const again = await t.app.request('/nodes?limit=5', { headers: { 'accept-encoding': 'gzip' } })
    expect(await again.text()).toBe(await plain.text())
    await publish(t, { pat, node: 'other', version: '1.0.0' })
    expect(((await (await t.app.request('/nodes?limit=5')).json()) as { total: number }).total).toBe(2)

    const { createApp } = await import('../../src/http/app')
    const gzipApp = createApp(t.deps, { gzip: true })
    await gzipApp.request('/nodes?limit=5')
    const zipped = await gzipApp.request('/nodes?limit=5', { headers: { 'accept-encoding': 'gzip, deflate' } })
    expect(zipped.headers.get('content-encoding')).toBe('gzip')
    const body = JSON.parse(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await zipped.arrayBuffer()))))
    expect(body.total).toBe(2)
    expect((await gzipApp.request('/nodes?limit=5')).headers.get('content-encoding')).toBeNull()

    // A first ask is gzipped too: a distinct search seldom comes twice.
    const first = await gzipApp.request('/nodes/search?search=other', { headers: { 'accept-encoding': 'gzip' } })
    expect([first.headers.get('content-encoding'), first.headers.get('vary')]).toEqual(['gzip', 'Accept-Encoding'])
    const found = JSON.parse(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await first.arrayBuffer()))))
    expect(found.nodes.map((n: { id: string }) => n.id)).toEqual(['other'])
  })
})
