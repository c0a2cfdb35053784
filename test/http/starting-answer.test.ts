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
