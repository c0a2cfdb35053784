/** What the services need, passed in whole by the app and in part by tests. */
import type { ArchiveLimits } from '../archive/entries'
import type { BlobStore } from '../blobs/blob-store'
import type { UrlSigner } from '../blobs/signing'
import type { Log } from '../log'
import type { NodeSearch } from '../search/node-search'
import type { Store } from '../store/db'
import type { MirrorRuntime } from './mirror/runtime'
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
}

export interface Deps {
  db: Store
  blobs: BlobStore
  signer: UrlSigner
  search: NodeSearch
  nodeJson: NodeJsonCache
  log: Log
  now: () => Date
  settings: RegistrySettings
  /** Admits or refuses one anonymous review from a client address. */
  reviewLimiter: RateLimiter
  /** Mirroring at serve time: archives fetched on first download, freshness; absent, mirrored archives not yet stored are 404. */
  mirror?: MirrorRuntime
}

export const timestamp = (deps: Pick<Deps, 'now'>) => deps.now().toISOString()
