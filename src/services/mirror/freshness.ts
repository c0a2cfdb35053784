/**
 * How fresh the mirrored data is, for the X-Mirror-Upstream header and /ready: a snapshot kept in memory (read
 * from the store now and then, and after each in-process sync), so that no request waits on a query for it.
 */
import { listSources } from '../../store/mirror-sources'
import type { MirrorSourceRow } from '../../store/schema'
import type { Deps } from '../deps'
import type { MirrorFreshness } from './runtime'

export interface FreshnessTracker {
  current(): MirrorFreshness | undefined
  /** Reads the sources again; `lastRun`: how the last in-process run of a source ended. */
  refresh(lastRun?: LastRun): Promise<void>
}

/** An in-process run's end: whether it could not reach its upstream at all, when it began, and why it failed. */
export interface LastRun {
  source: string
  unreachable: boolean
  attemptedAt: string
  error: string
}

/** ok while the last success is younger than `staleAfterMs`; unreachable when the last try could not reach the upstream. */
export function freshnessOf(source: MirrorSourceRow, now: number, staleAfterMs: number, unreachable: boolean): MirrorFreshness {
  const lastSuccess = source.last_success_at ? Date.parse(source.last_success_at) : undefined
  const failedLast = source.last_error !== ''
  const state = failedLast && unreachable ? 'unreachable' : lastSuccess !== undefined && now - lastSuccess <= staleAfterMs ? 'ok' : 'stale'
  return {
    state,
    upstream: source.id,
    lastSuccessAt: source.last_success_at,
    lastAttemptAt: source.last_attempt_at,
    lastError: source.last_error,
  }
}

/**
 * `preferred` is the upstream a serving registry syncs from; without one, the source synced (or imported)
 * most recently speaks for the mirror. A source gets its row once its upstream has answered (which says what kind
 * of upstream it is): until then, the preferred upstream's last run speaks for it, so that one never reached shows
 * as unreachable and not as nothing mirrored.
 */
export function createFreshnessTracker(
  deps: Pick<Deps, 'db' | 'now'>,
  opts: { staleAfterMs: number; preferred?: string },
): FreshnessTracker {
  let sources: MirrorSourceRow[] = []
  let lastRuns = new Map<string, LastRun>()
  return {
    current() {
      const preferred = sources.find((s) => s.id === opts.preferred)
      const unrecorded = !preferred && opts.preferred ? lastRuns.get(opts.preferred) : undefined
      if (unrecorded) return beforeFirstAnswer(unrecorded)
      const source = preferred ?? [...sources].sort((a, b) => (b.last_success_at ?? '').localeCompare(a.last_success_at ?? ''))[0]
      return source && freshnessOf(source, deps.now().getTime(), opts.staleAfterMs, lastRuns.get(source.id)?.unreachable ?? false)
    },
    async refresh(lastRun) {
      sources = await listSources(deps.db)
      if (lastRun) lastRuns = new Map(lastRuns).set(lastRun.source, lastRun)
    },
  }
}

/** A source whose upstream has never answered: nothing synced from it yet. */
const beforeFirstAnswer = (run: LastRun): MirrorFreshness => ({
  state: run.unreachable ? 'unreachable' : 'stale',
  upstream: run.source,
  lastSuccessAt: null,
  lastAttemptAt: run.attemptedAt,
  lastError: run.error,
})
