/** What a serving registry needs to act as a mirror: the upstream client for archives fetched on first download, and how fresh the data is. */
import type { CircuitBreaker } from '../../upstream/circuit-breaker'
import type { UpstreamHttp } from '../../upstream/http-client'
import type { LazyUpstream } from './lazy-upstream'

/** `ok`: the last sync succeeded recently; `stale`: it is too long ago (or never was); `unreachable`: the last try could not reach the upstream. */
export type UpstreamState = 'ok' | 'stale' | 'unreachable'

export interface MirrorFreshness {
  state: UpstreamState
  upstream: string
  lastSuccessAt: string | null
  lastAttemptAt: string | null
  lastError: string
}

/** One archive fetched on first download: how many downloads wait on it, and how to end it. */
export interface ArchiveFlight {
  done: Promise<unknown>
  waiting: number
  stop: AbortController
  /** Whether its body is coming: it holds one of the client's places (before, it may wait for one; after, none). */
  transferring: boolean
}

export interface MirrorRuntime {
  http: UpstreamHttp
  /** Hosts the archive fetches found unreachable, remembered until a probe finds them back. */
  breaker: CircuitBreaker
  /** The most a download waits for its archive's fetch. */
  waitMs: number
  /** Archive fetches in flight, by version id (oldest first): first downloads share one; one given up leaves at once. */
  inflight: Map<string, ArchiveFlight>
  /** The mirror's freshness, or undefined when this registry mirrors nothing. */
  freshness(): MirrorFreshness | undefined
  /** The upstream `serve --sync-from` keeps this registry in step with (a source id), if any. */
  following?: string
}

export function createMirrorRuntime(
  lazy: LazyUpstream,
  freshness: () => MirrorFreshness | undefined = () => undefined,
  following?: string,
): MirrorRuntime {
  return { ...lazy, inflight: new Map(), freshness, following }
}
