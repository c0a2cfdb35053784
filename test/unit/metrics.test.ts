import { describe, expect, test } from 'bun:test'
import { Gauge } from 'prom-client'
import { createMetrics, monitorEventLoop } from '../../src/metrics'
import { parseScrape, series } from '../support/metrics'

describe('metrics', () => {
  test('a blocked event loop shows as the delay of the timer that waited for it', async () => {
    const metrics = createMetrics()
    const stop = monitorEventLoop(metrics, 1)
    const blockedUntil = performance.now() + 40
    while (performance.now() < blockedUntil) {} // the timer, due after 1 ms, cannot fire for 40 ms
    let text = ''
    const samples = () => series(parseScrape(text), 'registry_mirror_event_loop_delay_seconds_count') ?? 0
    while (samples() < 2) {
      await new Promise((r) => setTimeout(r, 1))
      text = await metrics.registry.metrics()
    }
    stop()
    const s = parseScrape(text)
    expect(series(s, 'registry_mirror_event_loop_delay_seconds_sum')).toBeGreaterThanOrEqual(0.035)
    expect(series(s, 'registry_mirror_event_loop_delay_seconds_bucket', { le: '0.025' })).toBeLessThan(
      series(s, 'registry_mirror_event_loop_delay_seconds_count')!,
    )
  })

  test("each server's registry is its own, and another feature's gauge shows in it", async () => {
    const a = createMetrics()
    const b = createMetrics()
    new Gauge({ name: 'registry_mirror_sync_lag_seconds', help: 'test', registers: [a.registry] }).set(7)
    a.httpRequests.inc({ method: 'GET', route: '/health', status: '200' })
    const sa = parseScrape(await a.registry.metrics())
    const sb = parseScrape(await b.registry.metrics())
    expect(series(sa, 'registry_mirror_sync_lag_seconds')).toBe(7)
    expect(series(sb, 'registry_mirror_sync_lag_seconds')).toBeUndefined()
    expect(series(sb, 'registry_mirror_http_requests_total', { method: 'GET', route: '/health', status: '200' })).toBeUndefined()
  })
})
