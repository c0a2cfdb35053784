/** Request ids: sent back as X-Request-Id, taken from a proxy when well-formed, and carried by every log line of the request. */
import { afterEach, describe, expect, test } from 'bun:test'
import { UUID_PATTERN } from '../../src/domain/ids'
import type { NodeSearch } from '../../src/search/node-search'
import { aliceWithPublisher, makeTestApp, publish, type TestApp } from '../support/app'
import { makeZip, samplePack } from '../support/archives'

let t: TestApp
afterEach(() => t.cleanup())

const lines = () => t.logs.map((l) => JSON.parse(l) as Record<string, unknown>)

describe('X-Request-Id', () => {
  test('every response carries one: JSON, raw bodies, cached lists, pages, errors and unmatched paths', async () => {
    t = await makeTestApp()
    for (const path of ['/health', '/nodes', '/nodes', '/', '/nodes/nope', '/no/such/path', '/-/nodes/nope']) {
      const res = await t.app.request(path)
      expect({ path, id: res.headers.get('x-request-id') }).toEqual({ path, id: expect.stringMatching(UUID_PATTERN) })
    }
    const preflight = await t.app.request('/nodes', {
      method: 'OPTIONS',
      headers: { origin: 'https://ui.example', 'access-control-request-method': 'GET' },
    })
    expect(preflight.headers.get('x-request-id')).toMatch(UUID_PATTERN)
    expect(preflight.headers.get('access-control-allow-headers')).toContain('X-Request-Id')
  })

  test("a proxy's well-formed id is kept; anything too long or with other characters is replaced", async () => {
    t = await makeTestApp()
    const idFor = async (sent: string) =>
      (await t.app.request('/health', { headers: { 'x-request-id': sent } })).headers.get('x-request-id')!
    for (const kept of ['abc', 'trace:0af7651916cd43dd8448eb211c80319c', 'Root=1-67891233-abcdef012345678912345678', 'a'.repeat(128)]) {
      expect(await idFor(kept)).toBe(kept)
    }
    for (const refused of ['a'.repeat(129), 'has space', '<script>', 'quote"d', 'semi;colon', 'ünïcode', '']) {
      const id = await idFor(refused)
      expect(id).not.toBe(refused)
      expect(id).toMatch(UUID_PATTERN)
    }
  })
})

describe('log lines of a request', () => {
  test("the access line, an error line and a service's line of one request share its id", async () => {
    t = await makeTestApp()
    const failing: NodeSearch = {
      ...t.deps.search,
      // A dependency several calls below the handler logs through deps.log, as services do, then fails.
      async find() {
        t.deps.log.warn('search.trouble', { detail: 'index gone' })
        throw new Error('index gone')
      },
    }
    t.deps.search = failing
    const res = await t.app.request('/nodes/search?search=x', { headers: { 'x-request-id': 'req-42' } })
    expect(res.status).toBe(500)
    expect(res.headers.get('x-request-id')).toBe('req-42')
    const mine = lines().filter((l) => l.requestId === 'req-42')
    expect(mine.map((l) => l.event)).toEqual(['search.trouble', 'request.failed', 'request'])
    expect(mine.at(-1)).toMatchObject({ level: 'info', path: '/nodes/search', status: 500 })
  })

  test("a real service's line (archive.stored) carries the id of its request, also with requests running at once", async () => {
    t = await makeTestApp()
    const { pat } = await aliceWithPublisher(t)
    const urls: string[] = []
    for (const version of ['1.0.0', '2.0.0']) urls.push((await publish(t, { pat, node: 'pack', version })).body.signedUrl)
    const zip = makeZip(samplePack())
    await Promise.all(
      urls.map((signed, i) => {
        const url = new URL(signed)
        return t.app.request(url.pathname + url.search, {
          method: 'PUT',
          headers: { 'content-type': 'application/zip', 'x-request-id': `upload-${i}` },
          body: zip,
        })
      }),
    )
    const stored = lines().filter((l) => l.event === 'archive.stored')
    expect(stored.map((l) => [l.requestId, l.version]).sort()).toEqual([
      ['upload-0', '1.0.0'],
      ['upload-1', '2.0.0'],
    ])
    const access = lines().filter((l) => l.event === 'request' && l.method === 'PUT')
    expect(access.map((l) => [l.requestId, l.path]).sort()).toEqual([
      ['upload-0', '/archives/acme/pack/1.0.0/node.zip'],
      ['upload-1', '/archives/acme/pack/2.0.0/node.zip'],
    ])
  })

  test('lines written outside any request carry no request id', async () => {
    t = await makeTestApp()
    const res = await t.app.request('/health')
    // The request's own line carries its id: the line after it could have inherited it.
    expect(lines().at(-1)).toMatchObject({ event: 'request', requestId: res.headers.get('x-request-id') })
    t.deps.log.info('outside', {})
    expect(lines().at(-1)).not.toHaveProperty('requestId')
  })
})
