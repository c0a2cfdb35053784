/** serve --sync-from: the same engine in-process, and how fresh the data is (X-Mirror-Upstream, /ready). */
import { afterEach, describe, expect, test } from 'bun:test'
import { createFreshnessTracker } from '../../src/services/mirror/freshness'
import { mirrorMetrics } from '../../src/services/mirror/metrics'
import { createMirrorRuntime } from '../../src/services/mirror/runtime'
import { startSyncScheduler, type SyncScheduler } from '../../src/services/mirror/scheduler'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { parseScrape, series } from '../support/metrics'
import { fastHttp, lazyUpstream, serveTestApp, type ServedApp } from '../support/mirror'

let upstream: ServedApp
let mirror: TestApp
let scheduler: SyncScheduler | undefined
afterEach(async () => {
  await scheduler?.stop()
  await upstream?.stop()
  await mirror?.cleanup()
})

/** The sync metrics of the mirror's /metrics. */
async function syncMetrics(t: TestApp) {
  const s = parseScrape(await (await t.app.request('/metrics')).text())
  const state = (name: string) => series(s, 'registry_mirror_sync_state', { state: name })
  return {
    state: { ok: state('ok'), stale: state('stale'), unreachable: state('unreachable') },
    lastSuccess: series(s, 'registry_mirror_sync_last_success_timestamp_seconds'),
    lag: series(s, 'registry_mirror_sync_lag_seconds'),
    runs: {
      complete: series(s, 'registry_mirror_sync_runs_total', { result: 'complete' }),
      incomplete: series(s, 'registry_mirror_sync_runs_total', { result: 'incomplete' }),
    },
  }
}

/**
 * What serve wires for `--sync-from` (serve-mirror.ts), in process on the test's mirror: the freshness snapshot, the
 * mirror runtime and the sync metrics; `start` begins the runs (the first at once).
 */
function following(url: string, attempts: number) {
  const freshness = createFreshnessTracker(mirror.deps, { preferred: url, staleAfterMs: 10 * 60_000 })
  mirror.deps.mirror = createMirrorRuntime(lazyUpstream(mirror), () => freshness.current(), url)
  const metrics = mirrorMetrics(
    mirror.deps.metrics.registry,
    () => freshness.current(),
    () => mirror.clock.now.getTime(),
  )
  metrics.ensure()
  const start = (): SyncScheduler =>
    (scheduler = startSyncScheduler(mirror.deps, {
      from: url,
      archives: 'lazy',
      everyMs: 3600_000,
      fullEvery: 100,
      http: () => fastHttp({ attempts }).http,
      freshness,
      onRunEnded: (complete) => metrics.runEnded(complete),
    }))
  return { start }
}

describe('a serving mirror', () => {
  test('syncs in-process, says ok while fresh, stale when its last sync is too old, unreachable when the upstream is gone', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    await publishActive(upstream, { pat, node: 'pack', version: '1.0.0' })
    mirror = await makeTestApp()
    const { start } = following(upstream.url, 2)
    expect((await mirror.call('GET', '/health')).headers.get('x-mirror-upstream')).toBeNull() // mirrors nothing yet
    expect(await syncMetrics(mirror)).toMatchObject({ state: { ok: undefined }, lag: undefined }) // nor its metrics
    const runs = start()
    expect(await runs.runNow()).toMatchObject({ complete: true })
    const synced = mirror.clock.now.getTime() / 1000
    expect(await syncMetrics(mirror)).toEqual({
      state: { ok: 1, stale: 0, unreachable: 0 },
      lastSuccess: synced,
      lag: 0,
      runs: { complete: 1, incomplete: 0 },
    })
    const health = await mirror.call('GET', '/nodes/pack')
    expect(health.headers.get('x-mirror-upstream')).toBe('ok')
    expect((await mirror.call('GET', '/ready')).body.mirror).toEqual({
      upstream: upstream.url,
      state: 'ok',
      last_success_at: mirror.clock.now.toISOString(),
      last_attempt_at: mirror.clock.now.toISOString(),
      last_error: '',
    })

    mirror.clock.now = new Date(mirror.clock.now.getTime() + 11 * 60_000)
    expect((await mirror.call('GET', '/health')).headers.get('x-mirror-upstream')).toBe('stale')
    expect(await syncMetrics(mirror)).toMatchObject({ state: { ok: 0, stale: 1, unreachable: 0 }, lastSuccess: synced, lag: 660 })

    upstream.server.stop(true)
    expect(await runs.runNow()).toMatchObject({ complete: false, unreachable: true })
    const ready = await mirror.call('GET', '/ready')
    expect(ready.status).toBe(200) // serving offline is the point
    expect(ready.headers.get('x-mirror-upstream')).toBe('unreachable')
    expect(ready.body.mirror).toMatchObject({ state: 'unreachable', last_error: expect.stringContaining('cannot connect') })
    expect(await syncMetrics(mirror)).toMatchObject({
      state: { ok: 0, stale: 0, unreachable: 1 },
      lag: 660,
      runs: { complete: 1, incomplete: 1 },
    })
    // Reads, search and installs keep working from the local store.
    expect((await mirror.call('GET', '/nodes/search?search=pack')).body.nodes.map((n: any) => n.id)).toEqual(['pack'])
    expect((await mirror.call('GET', '/nodes/pack/install')).status).toBe(200)
  })

  test('an upstream never reached shows as unreachable, with the try and its error, before anything is mirrored', async () => {
    upstream = await serveTestApp()
    const url = upstream.url
    upstream.server.stop(true)
    mirror = await makeTestApp()
    const runs = following(url, 1).start()
    expect(await runs.runNow()).toMatchObject({ complete: false, unreachable: true })
    expect(await syncMetrics(mirror)).toEqual({
      state: { ok: 0, stale: 0, unreachable: 1 },
      lastSuccess: 0, // never
      lag: Infinity,
      runs: { complete: 0, incomplete: 1 },
    })
    const ready = await mirror.call('GET', '/ready')
    expect(ready.headers.get('x-mirror-upstream')).toBe('unreachable')
    expect(ready.body.mirror).toEqual({
      upstream: url,
      state: 'unreachable',
      last_success_at: null,
      last_attempt_at: mirror.clock.now.toISOString(),
      last_error: expect.stringContaining('cannot connect'),
    })
  })

  test('one run at a time: asking again while a run is under way answers that run', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    await publishActive(upstream, { pat, node: 'pack', version: '1.0.0' })
    mirror = await makeTestApp()
    const freshness = createFreshnessTracker(mirror.deps, { preferred: upstream.url, staleAfterMs: 60_000 })
    scheduler = startSyncScheduler(mirror.deps, {
      from: upstream.url,
      archives: 'none',
      everyMs: 3600_000,
      fullEvery: 100,
      http: () => fastHttp().http,
      freshness,
    })
    const [a, b] = await Promise.all([scheduler.runNow(), scheduler.runNow()])
    expect(a).toBe(b)
    expect(upstream.requests.filter((p) => p === '/changes')).toHaveLength(2) // the probe, then one page
  })
})
