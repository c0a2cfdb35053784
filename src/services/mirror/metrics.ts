/**
 * The mirror's metrics, registered once the mirror exists (a source synced or imported here, or `--sync-from`): its
 * state, when it last synced, how old its data is, and how `serve --sync-from` runs end. Gauges are read from the
 * freshness snapshot at each scrape. No label holds the upstream's address: a registry follows one at a time, and
 * the hosts archives come from are the upstream's to name (any number of them).
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import type { CircuitBreaker } from '../../upstream/circuit-breaker'
import type { MirrorFreshness, UpstreamState } from './runtime'

const STATES: readonly UpstreamState[] = ['ok', 'stale', 'unreachable']

export interface MirrorMetrics {
  /** Registers the metrics if the mirror exists now and they are not registered yet. */
  ensure(): void
  /** A `serve --sync-from` run ended. */
  runEnded(complete: boolean): void
  /** The breaker of archives fetched on first download, whose hosts found down the metrics count. */
  watchBreaker(breaker: CircuitBreaker): void
  /** An upstream host of archives went down (true) or came back (false). */
  upstreamChanged(down: boolean): void
}

export function mirrorMetrics(registry: Registry, freshness: () => MirrorFreshness | undefined, now: () => number): MirrorMetrics {
  let runs: Counter<'result'> | undefined
  let changes: Counter<'to'> | undefined
  let breaker: CircuitBreaker | undefined
  const lastSuccess = () => {
    const at = freshness()?.lastSuccessAt
    return at ? Date.parse(at) / 1000 : undefined
  }
  const register = () => {
    const registers = [registry]
    new Gauge({
      name: 'registry_mirror_sync_state',
      help: "1 for the mirror's state (ok: synced in time; stale: not lately, or never; unreachable: the last try could not reach the upstream), 0 for the others",
      labelNames: ['state'] as const,
      registers,
      collect() {
        const state = freshness()?.state
        for (const s of STATES) this.set({ state: s }, s === state ? 1 : 0)
      },
    })
    new Gauge({
      name: 'registry_mirror_sync_last_success_timestamp_seconds',
      help: 'When the last successful sync or import ended, seconds since the epoch (0: never)',
      registers,
      collect() {
        this.set(lastSuccess() ?? 0)
      },
    })
    new Gauge({
      name: 'registry_mirror_sync_lag_seconds',
      help: 'How old the mirrored data is: seconds since the last successful sync or import ended (+Inf: never)',
      registers,
      collect() {
        const at = lastSuccess()
        this.set(at === undefined ? Infinity : Math.max(0, now() / 1000 - at))
      },
    })
    runs = new Counter({
      name: 'registry_mirror_sync_runs_total',
      help: 'Runs of serve --sync-from by result: complete, or incomplete (the upstream unreachable, items it could not fetch)',
      labelNames: ['result'] as const,
      registers,
    })
    for (const result of ['complete', 'incomplete']) runs.inc({ result }, 0)
    new Gauge({
      name: 'registry_mirror_upstream_hosts_down',
      help: 'Upstream hosts that archive downloads found unreachable and are not asked until a probe finds them back',
      registers,
      collect() {
        this.set(breaker?.down().length ?? 0)
      },
    })
    changes = new Counter({
      name: 'registry_mirror_upstream_changes_total',
      help: 'Upstream hosts of archive downloads found unreachable (to="down") and found back by a probe (to="up")',
      labelNames: ['to'] as const,
      registers,
    })
    for (const to of ['down', 'up']) changes.inc({ to }, 0)
  }
  return {
    ensure() {
      if (!runs && freshness()) register()
    },
    runEnded(complete) {
      this.ensure()
      runs?.inc({ result: complete ? 'complete' : 'incomplete' })
    },
    watchBreaker(b) {
      breaker = b
    },
    upstreamChanged(down) {
      this.ensure()
      changes?.inc({ to: down ? 'down' : 'up' })
    },
  }
}
