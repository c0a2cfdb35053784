/** The services' dependencies for commands that work on a registry's data without serving it (sync, export, import). */
import { sql } from 'kysely'
import { DEFAULT_ARCHIVE_LIMITS } from './archive/entries'
import { createUrlSigner } from './blobs/signing'
import { SETTINGS, type BackendConfig } from './config'
import { openBackends } from './serve-backends'
import { createLog, type LogLevel } from './log'
import type { Deps } from './services/deps'
import { createNodeJsonCache } from './services/node-json'
import { createDownloadCounter } from './services/downloads'
import { createRateLimiter } from './services/rate-limit'
import { createSharedPolls } from './services/video-polls'
import { createMetrics } from './metrics'
import { createStoreSearch } from './search/store-search'
import { createRepoHost } from './upstream/repohost'
import { checkpointInBackground } from './store/checkpointer'
import { dialectOf } from './store/db'

/** Leftover staging files of a killed process are this old at most when a command starts (see blobs/disk.ts). */
const STALE_PART_MS = 60 * 60_000

/** `backends`: the data directory, or the PostgreSQL database and object storage, as serve takes them. */
export async function openDataDeps(backends: BackendConfig, opts: { logLevel: LogLevel }): Promise<Deps & { close(): Promise<void> }> {
  const log = createLog({ level: opts.logLevel })
  const { db, blobs, sqlitePath } = await openBackends(backends, backends.data, log, { durable: true })
  // Bulk writers: a page cache that holds a batch's pages (64 MiB rather than 2).
  if (dialectOf(db) === 'sqlite') await sql`pragma cache_size = -65536`.execute(db)
  // And checkpoints in another thread as they write, rather than all of it at close (see checkpointer.ts).
  const checkpointer = await checkpointInBackground(db, sqlitePath)
  await blobs.sweep(STALE_PART_MS)
  // No server here: nothing is rendered for clients and no index is kept; a running server catches up at its next start.
  const deps = {
    db,
    blobs,
    signer: createUrlSigner('unused'),
    search: createStoreSearch(db),
    nodeJson: createNodeJsonCache(db, ''),
    log,
    metrics: createMetrics(),
    now: () => new Date(),
    reviewLimiter: createRateLimiter(1, 1),
    // These commands write mirrored data only: no clients, so no video proxy and no claims.
    video: { startLimiter: createRateLimiter(1, 1), stageLimiter: createRateLimiter(1, 1), polls: createSharedPolls() },
    repoHost: createRepoHost({ apiUrl: SETTINGS['repohost-api-url'].default, timeoutMs: 1 }),
    claimLimiter: createRateLimiter(1, 1),
    settings: {
      publicUrl: '',
      maxUploadBytes: Number(SETTINGS['max-upload-bytes'].default),
      autoApprove: true,
      maxPublishersPerUser: 5,
      requireReviewAuth: false,
      uploadUrlTtlSeconds: 900,
      archiveLimits: DEFAULT_ARCHIVE_LIMITS,
      video: { public: false, maxImageBytes: Number(SETTINGS['video-max-image-bytes'].default) },
      readOnly: false,
      metrics: false,
      unclaimedPublisherId: SETTINGS['unclaimed-publisher-id'].default,
    },
  } as Omit<Deps, 'downloads'> as Deps
  // Nothing installs here; the counter is there for the type, and flushed on close all the same.
  deps.downloads = createDownloadCounter(deps)
  return {
    ...deps,
    close: async () => {
      await deps.downloads.stop()
      await checkpointer?.stop()
      await db.destroy()
    },
  }
}
