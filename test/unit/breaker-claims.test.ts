/**
 * Claims of this stop's upstream tests that no test could fail: a late failure of a request sent while the host
 * was up does not put off the probe; `--sync-retries 0` keeps a first download to one try; only a JSON body of
 * a 502 or 504 is read as another registry-mirror's final answer.
 */
import { expect, test } from 'bun:test'
import { createLog } from '../../src/log'
import { createLazyUpstream } from '../../src/services/mirror/lazy-upstream'
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker'
import { createUpstreamHttp } from '../../src/upstream/http-client'

const URL_A = 'http://a.test/archives/x/y/1.0.0/node.zip'
const down = { up: false, reason: 'cannot connect', timedOut: false } as const

test('a late failure of a request sent before the host went down does not put off the probe', () => {
  let now = 1_000_000
  const b = createCircuitBreaker({ openMs: 30_000, probeMaxMs: 110_000, now: () => now })
  const older = b.admit(URL_A)
  const first = b.admit(URL_A)
  if (first.go) first.settle(down)
  now += 30_000
  if (older.go) older.settle(down)
  expect(b.admit(URL_A).go).toBe(true) // the probe, due now
})

test('--sync-retries 0: a first download tries once', () => {
  const lazy = createLazyUpstream({ http: { timeoutMs: 30_000, attempts: 1 }, log: createLog({ write: () => {} }) })
  expect(lazy.http.options.attempts).toBe(1)
})

test.each([
  [502, 'text/plain'],
  [503, 'application/json'],
  [500, 'application/json'],
])('a %i %s body saying upstream_failed is retried (not a registry-mirror error answer)', async (status, type) => {
  let calls = 0
  const http = createUpstreamHttp({
    attempts: 3,
    backoffMs: 1,
    sleep: async () => {},
    resolve: async () => [], // the test's host names are asked of no resolver
    fetch: (async () => (
      calls++,
      new Response(JSON.stringify({ error: 'upstream_failed', message: 'x' }), { status, headers: { 'content-type': type } })
    )) as unknown as typeof fetch,
  })
  await expect(http.download(URL_A, async () => 'bytes')).rejects.toMatchObject({ kind: 'unreachable' })
  expect(calls).toBe(3)
})
