/**
 * The backends `serve` runs on, from its settings: SQLite and archives in the data directory (one process), or
 * PostgreSQL (--database) and S3-compatible storage (--storage) that several instances share as one registry. What
 * instances must agree on comes from the shared store then: the URL-signing key and the rate limits.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { BlobStore } from './blobs/blob-store'
import { createDiskBlobStore } from './blobs/disk'
import { createS3BlobStore, type S3Settings } from './blobs/s3'
import { createBlobCache } from './blobs/disk-cache'
import type { BackendConfig } from './config'
import { checkBlobsBesideTmp, prepareDataDir } from './data-dir'
import type { Log } from './log'
import { createRateLimiter, createSharedRateLimiter, type RateLimiter } from './services/rate-limit'
import { isDatabaseUnavailable, openStore, type Store } from './store/db'
import { isPostgresUrl, redactUrl } from './store/postgres'
import { sharedSecret } from './store/shared-state'
import { fileSecret } from './signing-key-file'

export interface Backends {
  db: Store
  blobs: BlobStore
  signingSecret: string
  /** The SQLite file of the store (for a second, read-only handle), when the store is one. */
  sqlitePath?: string
  limiter(name: string, limit: number, windowMs: number): RateLimiter
  /** For the start-up log line: where the store and archives are (no credentials). */
  where: { database: string; storage: string }
}

/** The object store's settings, from `--storage` and the `--s3-*` settings. */
export function s3Settings(config: BackendConfig, storage: string): S3Settings {
  return {
    url: storage,
    endpoint: config['s3-endpoint'],
    region: config['s3-region'],
    accessKeyId: config['s3-access-key-id'],
    secretAccessKey: config['s3-secret-access-key'],
    sessionToken: config['s3-session-token'],
  }
}

/** The store could not be opened (a newer schema, an unreadable file, a database away): one line for the operator. */
export class StoreOpenError extends Error {}

/** Opens the store at `location` (a SQLite file or a PostgreSQL URL), migrating it; a failure names where, without a password. */
export async function openStoreAt(location: string, where = isPostgresUrl(location) ? redactUrl(location) : location): Promise<Store> {
  try {
    return await openStore(location)
  } catch (err) {
    throw new StoreOpenError(`cannot open the store in ${where}: ${(err as Error).message}`, { cause: err })
  }
}

/**
 * How long `serve` waits for a database that does not answer at start. Exiting at once left an instance down when
 * it was (re)started during an outage: a crash-recovering PostgreSQL refused connections for 20 s after an
 * immediate stop, and a supervisor that restarts a failing service a few times and then gives up (systemd's start
 * limit: 5 in 10 s) stops trying well within that.
 */
export const DATABASE_WAIT_MS = 60_000
const DATABASE_RETRY_MS = 1_000

/** Opens the PostgreSQL store, trying again while the database is away, up to `waitMs`. */
async function openWaiting(open: () => Promise<Store>, log: Log, waitMs: number): Promise<Store> {
  const giveUpAt = Date.now() + waitMs
  for (;;) {
    try {
      return await open()
    } catch (err) {
      if (!isDatabaseUnavailable((err as Error).cause) || Date.now() + DATABASE_RETRY_MS > giveUpAt) throw err
      log.warn('database.waiting', { error: (err as Error).message, until: new Date(giveUpAt).toISOString() })
      await Bun.sleep(DATABASE_RETRY_MS)
    }
  }
}

/** Opens the store (migrating it) and the blob store; throws with a message fit for the operator. */
export async function openBackends(
  config: BackendConfig,
  dataDir: string,
  log: Log,
  opts: { durable: boolean; databaseWaitMs?: number },
): Promise<Backends> {
  const database = config.database
  const sqlitePath = database ? undefined : join(prepareDataDir(dataDir), 'registry.db')
  const db = database
    ? await openWaiting(() => openStoreAt(database, redactUrl(database)), log, opts.databaseWaitMs ?? 0)
    : await openStoreAt(sqlitePath!, dataDir)
  // Uploads are staged in the data directory either way: the archive checks read them there.
  const disk = createDiskBlobStore(prepareDataDir(dataDir), { durable: opts.durable })
  const storage = config.storage
  if (!storage) checkBlobsBesideTmp(dataDir)
  const blobs = storage
    ? createS3BlobStore(s3Settings(config, storage), disk, {
        cache: config['storage-cache-bytes'] > 0 ? createBlobCache(join(dataDir, 'cache'), config['storage-cache-bytes']) : undefined,
        onError: (err) => log.warn('storage.failed', { error: err.message, code: (err as { code?: string }).code }),
      })
    : disk
  const signingSecret = database
    ? await sharedSecret(db, 'url-signing', () => randomBytes(32).toString('hex'), new Date().toISOString())
    : fileSecret(dataDir)
  return {
    db,
    blobs,
    signingSecret,
    sqlitePath,
    // One process counts in memory; instances that share a database count there, or each would allow the limit.
    limiter: (name, limit, windowMs) =>
      database ? createSharedRateLimiter(db, name, limit, windowMs) : createRateLimiter(limit, windowMs),
    where: { database: database ? redactUrl(database) : 'sqlite', storage: storage ?? 'disk' },
  }
}
