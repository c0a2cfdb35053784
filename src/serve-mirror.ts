/**
 * What `serve` adds for mirroring: archives fetched on first download (bounded, with a breaker per upstream host), the freshness snapshot behind
 * X-Mirror-Upstream, /ready and the sync metrics, and `--sync-from` runs every `--sync-every` minutes. (Writes of another process, a
 * `sync` or `import` beside this server, reach this index and caches through serve's follower of the store's feed.)
 */
import type { Config } from './config'
import type { Deps } from './services/deps'
import { createFreshnessTracker } from './services/mirror/freshness'
import { createLazyUpstream } from './services/mirror/lazy-upstream'
import { mirrorMetrics } from './services/mirror/metrics'
import { createMirrorRuntime } from './services/mirror/runtime'
import { startSyncScheduler, type SyncScheduler } from './services/mirror/scheduler'
import { createUpstreamHttp } from './upstream/http-client'

const FRESHNESS_EVERY_MS = 30_000
/** Without --sync-from, mirrored data counts as stale a day after its last sync or import. */
const STALE_WITHOUT_SYNC_MS = 24 * 60 * 60_000

export async function startMirroring(deps: Deps, config: Config): Promise<{ stop(): Promise<void> }> {
  const everyMs = config['sync-every'] * 60_000
  const from = config['sync-from']
  const freshness = createFreshnessTracker(deps, {
    preferred: from,
    // Two missed runs (and the time one takes) before the data counts as stale.
    staleAfterMs: from ? 2 * everyMs + 5 * 60_000 : STALE_WITHOUT_SYNC_MS,
  })
  await freshness.refresh()
  const metrics = mirrorMetrics(
    deps.metrics.registry,
    () => freshness.current(),
    () => deps.now().getTime(),
  )
  metrics.ensure()
  const settings = {
    concurrency: config['sync-concurrency'],
    ratePerSecond: config['sync-rate'],
    timeoutMs: config['sync-timeout'] * 1000,
    attempts: config['sync-retries'] + 1,
    onRetry: (r: { url: string; attempt: number; waitMs: number; reason: string }) =>
      deps.log.info('mirror.retry', { url: r.url, attempt: r.attempt, wait_ms: r.waitMs, reason: r.reason }),
  }
  const http = (signal?: AbortSignal) => createUpstreamHttp({ ...settings, signal })
  const stopping = new AbortController()
  const lazy = createLazyUpstream({
    http: { ...settings, signal: stopping.signal },
    log: deps.log,
    onChange: (down) => metrics.upstreamChanged(down),
  })
  metrics.watchBreaker(lazy.breaker)
  deps.mirror = createMirrorRuntime(lazy, () => freshness.current(), from)
  // A sync or import beside the server makes a mirror of it: its metrics appear with the next refresh.
  const refresher = setInterval(() => void freshness.refresh().then(metrics.ensure, () => {}), FRESHNESS_EVERY_MS)
  refresher.unref?.()
  let scheduler: SyncScheduler | undefined
  if (from) {
    scheduler = startSyncScheduler(deps, {
      from,
      archives: config['sync-archives'],
      everyMs,
      fullEvery: config['sync-full-every'],
      http: (signal) => http(signal),
      freshness,
      onRunEnded: (complete) => metrics.runEnded(complete),
    })
  }
  return {
    async stop() {
      stopping.abort() // archive fetches no download waits for any more
      clearInterval(refresher)
      await scheduler?.stop()
    },
  }
}
