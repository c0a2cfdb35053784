/**
 * The answer while the server starts is rendered as every other error answer is: 503 `starting`, the registry's
 * error body, Retry-After, and the same Content-Type as the app's own error answers (it said
 * `application/json;charset=utf-8`, rendered by hand, where every other error says `application/json`).
 */
import { afterEach, expect, test } from 'bun:test'
import { createStartingApp } from '../../src/http/starting'
import { makeTestApp, type TestApp } from '../support/app'

let t: TestApp
afterEach(() => t.cleanup())

test('503 starting: the contract error body, Retry-After, and the content type of every other error answer', async () => {
  t = await makeTestApp()
  const starting = createStartingApp(t.deps.log)
  for (const [method, path] of [
    ['GET', '/nodes/blur-pack'],
    ['POST', '/publishers'],
    ['GET', '/'],
  ] as const) {
    const res = await starting.fetch(new Request(`http://127.0.0.1${path}`, { method }))
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(await res.json()).toEqual({ error: 'starting', message: 'the server is starting; try again shortly' })
    const other = await t.app.request('/nodes/no-such-node')
    expect(other.status).toBe(404)
    expect(res.headers.get('content-type')).toBe(other.headers.get('content-type'))
  }
})

test('503 starting carries the CORS headers of --cors-origin, and preflights are answered, as once started', async () => {
  t = await makeTestApp()
  const anyOrigin = await createStartingApp(t.deps.log).fetch(
    new Request('http://127.0.0.1/nodes', { headers: { origin: 'https://ui.example' } }),
  )
  expect(anyOrigin.status).toBe(503)
  expect(anyOrigin.headers.get('access-control-allow-origin')).toBe('*')
  expect(anyOrigin.headers.get('access-control-expose-headers')).toContain('Retry-After')

  const listed = createStartingApp(t.deps.log, 'https://a.example, https://ui.example')
  const ask = (origin: string, method = 'GET') =>
    listed.fetch(new Request('http://127.0.0.1/nodes', { method, headers: { origin, 'access-control-request-method': 'GET' } }))
  expect((await ask('https://ui.example')).headers.get('access-control-allow-origin')).toBe('https://ui.example')
  expect((await ask('https://other.example')).headers.get('access-control-allow-origin')).toBeNull()
  const preflight = await ask('https://ui.example', 'OPTIONS')
  expect(preflight.status).toBe(204)
  expect(preflight.headers.get('access-control-allow-origin')).toBe('https://ui.example')
})
