/** What the services need, passed in whole by the app and in part by tests. */
import type { ArchiveLimits } from '../archive/entries'
import type { BlobStore } from '../blobs/blob-store'
import type { UrlSigner } from '../blobs/signing'
import type { Log } from '../log'
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
  /** Refuse every write from clients (403 read_only); installs are answered without counting. */
  readOnly: boolean
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
}

export const timestamp = (deps: Pick<Deps, 'now'>) => deps.now().toISOString()
