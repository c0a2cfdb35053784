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
  /** Reads the sources again; `unreachable` says the last in-process run could not reach its upstream. */
  refresh(lastRun?: { source: string; unreachable: boolean }): Promise<void>
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
 * most recently speaks for the mirror.
 */
export function createFreshnessTracker(
  deps: Pick<Deps, 'db' | 'now'>,
  opts: { staleAfterMs: number; preferred?: string },
): FreshnessTracker {
  let sources: MirrorSourceRow[] = []
  let unreachable = new Map<string, boolean>()
  return {
    current() {
      const source =
        sources.find((s) => s.id === opts.preferred) ??
        [...sources].sort((a, b) => (b.last_success_at ?? '').localeCompare(a.last_success_at ?? ''))[0]
      return source && freshnessOf(source, deps.now().getTime(), opts.staleAfterMs, unreachable.get(source.id) ?? false)
    },
    async refresh(lastRun) {
      sources = await listSources(deps.db)
      if (lastRun) unreachable = new Map(unreachable).set(lastRun.source, lastRun.unreachable)
    },
  }
}
