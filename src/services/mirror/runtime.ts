/** What a serving registry needs to act as a mirror: the upstream client for archives fetched on first download, and how fresh the data is. */
import type { UpstreamHttp } from '../../upstream/http-client'

/** `ok`: the last sync succeeded recently; `stale`: it is too long ago (or never was); `unreachable`: the last try could not reach the upstream. */
export type UpstreamState = 'ok' | 'stale' | 'unreachable'

export interface MirrorFreshness {
  state: UpstreamState
  upstream: string
  lastSuccessAt: string | null
  lastAttemptAt: string | null
  lastError: string
}

export interface MirrorRuntime {
  http: UpstreamHttp
  /** Archive fetches in flight, by version id: concurrent first downloads share one fetch. */
  inflight: Map<string, Promise<unknown>>
  /** The mirror's freshness, or undefined when this registry mirrors nothing. */
  freshness(): MirrorFreshness | undefined
  /** The upstream `serve --sync-from` keeps this registry in step with (a source id), if any. */
  following?: string
}

export function createMirrorRuntime(
  http: UpstreamHttp,
  freshness: () => MirrorFreshness | undefined = () => undefined,
  following?: string,
): MirrorRuntime {
  return { http, inflight: new Map(), freshness, following }
}
