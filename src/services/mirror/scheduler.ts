/**
 * `serve --sync-from`: the same sync engine, in the serving process, every N minutes, one run at a time. Its
 * writes go through commitWrite, so the index and caches follow at once. Stopping aborts a run between batches.
 */
import { withoutUrlSecrets } from '../../domain/urls'
import type { ArchiveMode } from '../../store/schema'
import type { UpstreamHttp } from '../../upstream/http-client'
import { timestamp, type Deps } from '../deps'
import type { FreshnessTracker } from './freshness'
import { runSync, type SyncSummary } from './sync'

export interface SyncScheduler {
  /** Runs now unless a run is under way (then answers that run's summary). */
  runNow(): Promise<SyncSummary | undefined>
  stop(): Promise<void>
}

export function startSyncScheduler(
  deps: Deps,
  opts: {
    from: string
    archives: ArchiveMode
    everyMs: number
    fullEvery: number
    http: (signal: AbortSignal) => UpstreamHttp
    freshness: FreshnessTracker
    /** A run ended (not one stopped by the server stopping), its freshness read again. */
    onRunEnded?: (complete: boolean) => void
  },
): SyncScheduler {
  const stopping = new AbortController()
  const shownUpstream = withoutUrlSecrets(opts.from)
  let running: Promise<SyncSummary | undefined> | undefined
  let timer: ReturnType<typeof setTimeout> | undefined

  const run = async (): Promise<SyncSummary | undefined> => {
    if (stopping.signal.aborted) return undefined
    deps.log.info('mirror.sync_started', { upstream: shownUpstream })
    const attemptedAt = timestamp(deps)
    const summary = await runSync(deps, {
      from: opts.from,
      archives: opts.archives,
      full: false,
      fullEvery: opts.fullEvery,
      http: opts.http(stopping.signal),
      signal: stopping.signal,
    })
    const lastRun = { source: opts.from, unreachable: summary.unreachable, attemptedAt, error: summary.reason ?? '' }
    await opts.freshness.refresh(lastRun).catch(() => {})
    const fields = {
      upstream: shownUpstream,
      complete: summary.complete,
      full: summary.full,
      problems: summary.problems.length,
      seconds: Math.round(summary.seconds * 10) / 10,
    }
    if (summary.complete) deps.log.info('mirror.sync_done', { ...fields, nodes: summary.changed.nodes, versions: summary.changed.versions })
    else if (!stopping.signal.aborted) deps.log.warn('mirror.sync_incomplete', { ...fields, reason: summary.reason })
    if (!stopping.signal.aborted) opts.onRunEnded?.(summary.complete)
    return summary
  }
  const runNow = () => {
    running ??= run().finally(() => (running = undefined))
    return running
  }
  const schedule = () => {
    timer = setTimeout(() => {
      void runNow()
        .catch((err: Error) => deps.log.error('mirror.sync_failed', { error: withoutUrlSecrets(err.message) }))
        .finally(() => !stopping.signal.aborted && schedule())
    }, opts.everyMs)
    timer.unref?.()
  }
  void runNow()
    .catch((err: Error) => deps.log.error('mirror.sync_failed', { error: withoutUrlSecrets(err.message) }))
    .finally(() => !stopping.signal.aborted && schedule())
  return {
    runNow,
    async stop() {
      stopping.abort()
      clearTimeout(timer)
      await running?.catch(() => {})
    },
  }
}
