/**
 * A downstream sync from a mirror whose own upstream is gone: that mirror's 502 `upstream_failed` is final (asking
 * again in seconds finds the same, since it remembers the failure), so the sync does not retry it and ends at once,
 * incomplete, saying why. It retried each such 502 five times with backoff: 11.5 s an archive, 80 s with a mirror
 * that took 11.5 s to answer each.
 */
import { afterEach, expect, test } from 'bun:test'
import { makeTestApp, type TestApp } from '../support/app'
import { lazyMirrorOfProxiedUpstream, MISSING, type GoneUpstream } from '../support/gone-upstream'
import { serveTestApp, type ServedApp } from '../support/mirror'
import { runSync } from '../../src/services/mirror/sync'
import { createUpstreamHttp } from '../../src/upstream/http-client'

let gone: GoneUpstream | undefined
let middle: ServedApp | undefined
let downstream: TestApp | undefined
afterEach(async () => {
  await gone?.stop()
  await middle?.stop()
  await downstream?.cleanup()
  gone = middle = downstream = undefined
})

test('a downstream sync from a mirror whose upstream is gone ends at once, incomplete, saying why', async () => {
  middle = await serveTestApp()
  gone = await lazyMirrorOfProxiedUpstream({ timeoutMs: 5_000, into: middle })
  gone.proxy.cut()
  downstream = await makeTestApp()
  // The downstream waits as `sync` does by default: 5 retries with backoff from 0.5 s.
  const http = createUpstreamHttp({ timeoutMs: 5_000, attempts: 6, backoffMs: 500 })
  const started = performance.now()
  const summary = await runSync(downstream.deps, { from: middle.url, archives: 'eager', full: false, fullEvery: 1000, http })
  const ms = performance.now() - started
  expect(summary.complete).toBe(false)
  expect(summary.archives).toMatchObject({ fetched: 1, failed: 1 })
  expect(summary.reason).toMatch(
    /^1 archive could not be fetched \(the first, pack@1\.0\.0: HTTP 502 from \S+: upstream_failed: this archive is not stored here yet, and the upstream has been unreachable since \S+Z; it is asked again in \d+ s\)$/,
  )
  expect(ms).toBeLessThan(5_000)
  expect(middle.requests.filter((p) => p === MISSING)).toHaveLength(1) // not asked again
}, 60_000)
