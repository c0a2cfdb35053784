/**
 * `registry-mirror copy-store`: moves a registry kept in a data directory (SQLite and archives on disk) onto a new
 * PostgreSQL database and, with --storage, a bucket, for running several instances. Every row and archive comes
 * along (users, tokens, the change feed and its serials, the audit log, the signing key); archives are hashed
 * again on the way. Run it with no server on the data directory, once, into an empty database.
 */
import { parseCommandArgs } from './cli-args'
import { BACKEND_SETTINGS, loadConfig } from './config'
import { existingStoreFile } from './data-dir'
import { plural } from './domain/plural'
import { createDiskBlobStore } from './blobs/disk'
import type { BlobStore } from './blobs/blob-store'
import { createS3BlobStore } from './blobs/s3'
import { withStorageWords } from './blobs/storage-failure'
import { openStoreAt, s3Settings } from './serve-backends'
import { fileSecret } from './signing-key-file'
import type { Io } from './io'
import { copyStore, refreshCopiedStatistics, TargetNotEmptyError } from './store/copy'
import type { Store } from './store/db'
import { redactUrl } from './store/postgres'

export const COPY_HELP = `Usage: registry-mirror copy-store --data DIR --database URL [--storage s3://BUCKET/PREFIX] [--s3-* ...]

Copies the registry in DIR (registry.db, the archives, the signing key) into a new, empty PostgreSQL database and,
with --storage, its archives into the bucket (each hashed again on the way). Afterwards, start every instance with
the same --database and --storage. Stop the server on DIR first; DIR is only read.`

export async function copyCommand(argv: string[], io: Io): Promise<number> {
  const names = Object.keys(BACKEND_SETTINGS)
  const { values } = parseCommandArgs({
    args: argv,
    options: Object.fromEntries([...names.map((n) => [n, { type: 'string' as const }]), ['help', { type: 'boolean' as const }]]),
    strict: true,
    allowPositionals: false,
  })
  const { help, ...flags } = values as Record<string, string | boolean | undefined>
  if (help) return (io.out(COPY_HELP), 0)
  const { config, problems } = loadConfig({ flags: flags as Record<string, string | undefined>, env: io.env }, BACKEND_SETTINGS)
  if (!config) {
    for (const p of problems) io.err(p)
    return 2
  }
  if (!config.database) return (io.err('--database: required (the PostgreSQL database to copy into)'), 2)
  let from: Store | undefined
  let to: Store | undefined
  try {
    // Archives first: the bucket is content-addressed, so a run that fails later leaves nothing wrong behind and
    // the next one skips what arrived. The rows then go in one transaction: all of them or none.
    const source = existingStoreFile(config.data)
    const archives = config.storage ? await copyArchives(config) : 0
    from = await openStoreAt(source)
    to = await openStoreAt(config.database)
    // Signed URLs handed out before the move stay valid: the instances sign with the same key.
    // Read as serve reads it: an empty key file (a first start killed while making it) is no key to copy.
    const key = fileSecret(config.data)
    const counts = await copyStore(from, to, { secrets: { 'url-signing': key } })
    const rows = Object.values(counts).reduce((a, b) => a + b, 0)
    io.out(
      `copied ${plural(rows, 'row')} in ${plural(Object.keys(counts).length, 'table')} and ${plural(archives, 'archive')} ` +
        `into ${redactUrl(config.database)}`,
    )
    return 0
  } catch (err) {
    if (err instanceof TargetNotEmptyError && err.sameRegistry && from && to) {
      // A run killed after its commit: the rows and the key are there; only the statistics may be missing.
      try {
        await refreshCopiedStatistics(from, to)
      } catch (statsErr) {
        return (io.err(`copy failed: ${(statsErr as Error).message}`), 1)
      }
      io.out(err.message)
      return 0
    }
    if (err instanceof TargetNotEmptyError) return (io.err(err.message), 1)
    io.err(`copy failed (the database was left as it was): ${(err as Error).message}`)
    return 1
  } finally {
    await from?.destroy()
    await to?.destroy()
  }
}

async function copyArchives(config: NonNullable<ReturnType<typeof loadConfig<typeof BACKEND_SETTINGS>>['config']>): Promise<number> {
  const disk = createDiskBlobStore(config.data)
  let failure: Error | undefined
  const bucket = createS3BlobStore(s3Settings(config, config.storage!), disk, { onError: (err) => (failure = err) })
  let copied = 0
  try {
    for await (const sha of disk.list()) {
      await copyArchive(disk, bucket, sha)
      copied++
    }
  } catch (err) {
    // The 503 says "try again shortly": the operator needs the bucket's own words (no such bucket, a wrong key).
    throw withStorageWords(err, failure)
  }
  return copied
}

async function copyArchive(disk: BlobStore, bucket: BlobStore, sha: string): Promise<void> {
  const blob = (await disk.open(sha))!
  const staged = await bucket.stage(blob.stream(), Number.MAX_SAFE_INTEGER)
  if (staged.sha256 !== sha) {
    await staged.discard()
    throw new Error(`archive ${sha} on disk has other bytes (SHA-256 ${staged.sha256}); nothing of it was copied`)
  }
  await staged.commit()
}
