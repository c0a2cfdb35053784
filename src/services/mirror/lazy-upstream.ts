/**
 * The upstream client of archives fetched on first download. A person waits on these, so unlike a sync run's
 * requests (retried for minutes, since a run has time) each is bounded: one retry within one `--sync-timeout` until
 * the answer's headers, and a host found unreachable is remembered (a circuit breaker), so the downloads after it
 * fail at once until one probe finds the host back. The breaker's changes are logged and counted.
 */
import { IDLE_TIMEOUT_S } from '../../http/idle-timeout'
import type { Log } from '../../log'
import { createCircuitBreaker, type CircuitBreaker } from '../../upstream/circuit-breaker'
import { createUpstreamHttp, JSON_REPLY_TIMEOUTS, type UpstreamHttp, type UpstreamHttpOptions } from '../../upstream/http-client'

/** How long a host found unreachable is not asked again; then one download probes it. */
export const LAZY_OPEN_MS = 30_000
/**
 * The most a download waits, whatever `--sync-timeout` says (it may be an hour): its answer must start before the
 * server's idle timeout closes the connection with none (a client then sees a dropped connection, not a 504).
 */
export const MAX_DOWNLOAD_WAIT_MS = (IDLE_TIMEOUT_S - 10) * 1000
/** Tries of one fetch, the first included: a connection cut on a flaky link is worth one more, within the deadline. */
export const LAZY_ATTEMPTS = 2

export interface LazyUpstream {
  http: UpstreamHttp
  breaker: CircuitBreaker
  /**
   * The most a download waits for its archive to be fetched (a slow but steady transfer may take longer: it goes on,
   * and a later download finds the archive stored).
   */
  waitMs: number
}

export interface LazyUpstreamOptions {
  /** The upstream settings shared with sync runs (`--sync-timeout`, `--sync-retries`, concurrency, rate). */
  http: Partial<UpstreamHttpOptions> & { timeoutMs: number; attempts: number }
  openMs?: number
  log: Log
  /** Told when a host goes down (true) and when it is back (false), for metrics. */
  onChange?: (down: boolean) => void
}

export function createLazyUpstream(opts: LazyUpstreamOptions): LazyUpstream {
  const openMs = opts.openMs ?? LAZY_OPEN_MS
  const waitMs = Math.min(JSON_REPLY_TIMEOUTS * opts.http.timeoutMs, MAX_DOWNLOAD_WAIT_MS)
  const breaker = createCircuitBreaker({
    openMs,
    // By then the download that probed has answered, and a probe that got one of the client's places has ended (its
    // tries end within one --sync-timeout of that): one still out waits behind our own transfers, not the host.
    probeMaxMs: waitMs,
    onDown(down) {
      opts.log.warn('mirror.upstream_down', {
        upstream: down.host,
        reason: down.reason,
        retry_in_s: Math.ceil(openMs / 1000),
      })
      opts.onChange?.(true)
    },
    onBack(host, downForMs) {
      opts.log.info('mirror.upstream_back', { upstream: host, down_for_s: Math.round(downForMs / 1000) })
      opts.onChange?.(false)
    },
  })
  const http = createUpstreamHttp({
    ...opts.http,
    attempts: Math.min(LAZY_ATTEMPTS, opts.http.attempts),
    deadlineMs: Math.min(opts.http.timeoutMs, MAX_DOWNLOAD_WAIT_MS),
    breaker,
  })
  return { http, breaker, waitMs }
}
