/** What the services need, passed in whole by the app and in part by tests. */
import type { ArchiveLimits } from '../archive/entries'
import type { BlobStore } from '../blobs/blob-store'
import type { UrlSigner } from '../blobs/signing'
import type { Log } from '../log'
import type { Metrics } from '../metrics'
import type { NodeSearch } from '../search/node-search'
import type { Store } from '../store/db'
import type { VideoProvider } from '../upstream/video-provider'
import type { RepoHost } from '../upstream/repohost'

import type { DownloadCounter } from './downloads'
import type { MirrorRuntime } from './mirror/runtime'
import type { NodeJsonCache } from './node-json'
import type { RateLimiter } from './rate-limit'
import type { SharedPolls } from './video-polls'
import type { StoreFollower } from './store-follower'

export interface RegistrySettings {
  /** Base of every absolute URL handed out, without a trailing slash. */
  publicUrl: string
  maxUploadBytes: number
  autoApprove: boolean
  maxPublishersPerUser: number
  requireReviewAuth: boolean
  uploadUrlTtlSeconds: number
  archiveLimits: ArchiveLimits
  video: VideoSettings
  /** Refuse every write from clients (403 read_only); installs are answered without counting. */
  readOnly: boolean
  /** Serve GET /metrics (the counting happens either way). */
  metrics: boolean
  /** Answer archive downloads with a redirect to a short-lived presigned URL of the object store (when it has them). */
  presignedDownloads?: boolean

  /** The publisher whose nodes may be claimed. */
  unclaimedPublisherId: string
}

export interface VideoSettings {
  /** Callers without credentials may use the proxy and image staging (keyed by client address). */
  public: boolean
  /** Largest staged image, and largest decoded data: URI in a task. */
  maxImageBytes: number
}

export interface Deps {
  db: Store
  /** Where this process follows the change feed (serve sets it; /ready reports the index lag from it). */
  feed?: Pick<StoreFollower, 'applied'>
  blobs: BlobStore
  signer: UrlSigner
  search: NodeSearch
  nodeJson: NodeJsonCache
  /** Installs count here; the counts reach the store at most a flush interval later. */
  downloads: DownloadCounter
  /** Logs through this carry the request's id while a request runs (Log.within). */
  log: Log
  /** The one metrics registry; features register their own metrics in it (src/metrics.ts says how). */
  metrics: Metrics
  now: () => Date
  settings: RegistrySettings
  /** Admits or refuses one anonymous review from a client address. */
  reviewLimiter: RateLimiter
  video: {
    /** The configured provider; none makes the proxy answer 503. */
    provider?: VideoProvider
    /** Admits or refuses one task start, per caller. */
    startLimiter: RateLimiter
    /** Admits or refuses one image staging, per caller. */
    stageLimiter: RateLimiter
    /** Polls of one task within a short window share the provider's answer. */
    polls: SharedPolls
  }
  /** The source-code host claims are checked against. */
  repoHost: RepoHost
  /** Admits or refuses one claim that would ask the repository host, per user (each asks it up to three times). */
  claimLimiter: RateLimiter

  /** Mirroring at serve time: archives fetched on first download, freshness; absent, mirrored archives not yet stored are 404. */
  mirror?: MirrorRuntime
}

export const timestamp = (deps: Pick<Deps, 'now'>) => deps.now().toISOString()
