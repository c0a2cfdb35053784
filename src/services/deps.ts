/** What the services need, passed in whole by the app and in part by tests. */
import type { ArchiveLimits } from '../archive/entries'
import type { BlobStore } from '../blobs/blob-store'
import type { UrlSigner } from '../blobs/signing'
import type { Log } from '../log'
import type { Metrics } from '../metrics'
import type { NodeSearch } from '../search/node-search'
import type { Store } from '../store/db'
import type { NodeJsonCache } from './node-json'
import type { RateLimiter } from './rate-limit'

export interface RegistrySettings {
  /** Base of every absolute URL handed out, without a trailing slash. */
  publicUrl: string
  maxUploadBytes: number
  autoApprove: boolean
  maxPublishersPerUser: number
  requireReviewAuth: boolean
  uploadUrlTtlSeconds: number
  archiveLimits: ArchiveLimits
  /** Serve GET /metrics (the counting happens either way). */
  metrics: boolean
}

export interface Deps {
  db: Store
  blobs: BlobStore
  signer: UrlSigner
  search: NodeSearch
  nodeJson: NodeJsonCache
  /** Logs through this carry the request's id while a request runs (Log.within). */
  log: Log
  /** The one metrics registry; features register their own metrics in it (src/metrics.ts says how). */
  metrics: Metrics
  now: () => Date
  settings: RegistrySettings
  /** Admits or refuses one anonymous review from a client address. */
  reviewLimiter: RateLimiter
}

export const timestamp = (deps: Pick<Deps, 'now'>) => deps.now().toISOString()
