/**
 * `registry-mirror blobs check|sweep`: archive and image bytes in the blob store that no row needs, and rows whose
 * bytes are gone. They open the store and the blob store as serve does (--data, or --database and --storage with the
 * --s3-* settings), and work whether or not servers run on them: the sweep decides under a lock that writers take
 * too (services/blob-sweep.ts).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BlobStore } from './blobs/blob-store'
import { createDiskBlobStore } from './blobs/disk'
import { createS3BlobStore } from './blobs/s3'
import { withStorageWords } from './blobs/storage-failure'
import { parseCommandArgs, wholeNumber } from './cli-args'
import { UsageError } from './cli-credentials'
import { printUsage } from './cli-usage'
import { BACKEND_SETTINGS, loadConfig } from './config'
import { DataDirError, existingStoreFile } from './data-dir'
import { count, plural } from './domain/plural'
import { forTerminal, type Io } from './io'
import { openStoreAt, s3Settings } from './serve-backends'
import { checkBlobs, sweepBlobs, type CheckReport, type SweepReport } from './services/blob-sweep'
import type { Store } from './store/db'

export const BLOBS_HELP = `Usage:
  registry-mirror blobs check [--limit N] [--data DIR | --database URL [--storage s3://BUCKET/PREFIX] [--s3-* ...]]
  registry-mirror blobs sweep [--dry-run] [--older-than HOURS] [same store options]

check: counts the stored blobs, the versions (and uploaded images) whose bytes are missing, and the stored blobs
       no row references, with their total size; lists the first N of each (--limit, default 20).
       Exit status: 0 when no row's bytes are missing, 3 when some are (1: an error, 2: bad usage).
sweep: removes the blobs no row references that were last written more than HOURS ago (default 24), and on
       object storage what killed /ready probes left as old; says how many and how many bytes. --dry-run only
       counts. Safe beside running servers, on one instance or several: a writer about to use bytes holds them
       (blob intents), and the sweep decides and deletes under a lock those writers take too.
       Incomplete multipart uploads cannot be listed by this client: give the bucket a lifecycle rule
       (AbortIncompleteMultipartUpload, e.g. after 1 day) to remove them.
Store options are serve's (see "registry-mirror serve --help"); REGISTRY_MIRROR_* and AWS_* variables count too.`

/** The exit status of `blobs check` when rows' bytes are missing. */
export const MISSING_EXIT = 3

const LISTED_DEFAULT = 20
const MAX_HOURS = 24 * 365 * 100

export async function blobsCommand(sub: string | undefined, argv: string[], io: Io): Promise<number> {
  if (sub === undefined || sub === '--help' || sub === '-h') return printUsage(io, BLOBS_HELP, sub !== undefined)
  if (sub !== 'check' && sub !== 'sweep') throw new UsageError(`unknown command "blobs ${sub}"; run "registry-mirror help blobs"`)
  const own = sub === 'check' ? ['limit'] : ['older-than']
  const { values } = parseCommandArgs({
    args: argv,
    options: Object.fromEntries([
      ...[...Object.keys(BACKEND_SETTINGS), ...own].map((n) => [n, { type: 'string' as const }]),
      ...['help', ...(sub === 'sweep' ? ['dry-run'] : [])].map((n) => [n, { type: 'boolean' as const }]),
    ]),
    strict: true,
    allowPositionals: false,
  })
  const { help, limit, 'older-than': olderThan, 'dry-run': dryRun, ...flags } = values as Record<string, string | boolean | undefined>
  if (help) return (io.out(BLOBS_HELP), 0)
  const listed = limit === undefined ? LISTED_DEFAULT : wholeNumber(limit)
  if (listed === undefined || listed > 10_000) throw new UsageError(`--limit: expected a whole number from 0 to 10000 (got "${limit}")`)
  const hours = olderThan === undefined ? 24 : wholeNumber(olderThan)
  if (hours === undefined || hours > MAX_HOURS) {
    throw new UsageError(`--older-than: expected a whole number of hours from 0 to ${MAX_HOURS} (got "${olderThan}")`)
  }
  const { config, problems } = loadConfig({ flags: flags as Record<string, string | undefined>, env: io.env }, BACKEND_SETTINGS)
  if (!config) throw new UsageError(problems.join('\n'))
  return withBlobStores(config, async (deps) => {
    const now = new Date()
    if (sub === 'check') {
      const report = await checkBlobs(deps, { now, listed })
      for (const line of checkLines(report)) io.out(line)
      return report.missing.hashes ? MISSING_EXIT : 0
    }
    const report = await sweepBlobs(deps, { now, olderThanMs: hours * 3600_000, dryRun: dryRun === true })
    for (const line of sweepLines(report, hours, dryRun === true, config.storage !== undefined)) io.out(line)
    return 0
  })
}

type BackendConfig = NonNullable<ReturnType<typeof loadConfig<typeof BACKEND_SETTINGS>>['config']>

/** The store and the blob store as serve opens them; object storage gets a staging directory of its own (unused). */
async function withBlobStores<T>(config: BackendConfig, fn: (deps: { db: Store; blobs: BlobStore }) => Promise<T>): Promise<T> {
  if (!config.storage && !existsSync(join(config.data, 'blobs'))) {
    // Checked before the store opens: a mistyped --data would otherwise report every archive missing.
    if (!config.database) existingStoreFile(config.data)
    throw new DataDirError(`no archives in ${config.data}: it has no blobs directory (is --data right?)`)
  }
  const staging = config.storage ? mkdtempSync(join(tmpdir(), 'registry-mirror-blobs-')) : undefined
  let db: Store | undefined
  try {
    const location = config.database ?? existingStoreFile(config.data)
    db = await openStoreAt(location)
    let failure: Error | undefined
    const blobs = staging
      ? createS3BlobStore(s3Settings(config, config.storage!), createDiskBlobStore(staging), { onError: (err) => (failure = err) })
      : createDiskBlobStore(config.data)
    try {
      return await fn({ db, blobs })
    } catch (err) {
      throw withStorageWords(err, failure)
    }
  } finally {
    await db?.destroy()
    if (staging) rmSync(staging, { recursive: true, force: true })
  }
}

const bytes = (n: number) => plural(n, 'byte')

function checkLines(r: CheckReport): string[] {
  const lines = [`stored: ${plural(r.stored.count, 'blob')}, ${bytes(r.stored.bytes)}`]
  const m = r.missing
  lines.push(
    m.hashes
      ? `missing: the bytes of ${plural(m.archives, "version's archive", "versions' archives")} and ` +
          `${plural(m.images, 'uploaded image')} (${plural(m.hashes, 'blob')})`
      : 'missing: none (every archive and uploaded image has its bytes)',
  )
  for (const v of m.first) lines.push(`  ${forTerminal(v.version)}  ${v.sha256}`)
  if (m.archives > m.first.length) lines.push(`  ... and ${count(m.archives - m.first.length)} more versions`)
  const u = r.unreferenced
  lines.push(
    u.count
      ? `unreferenced: ${plural(u.count, 'blob')}, ${bytes(u.bytes)} (blobs sweep removes those older than its grace)`
      : 'unreferenced: none',
  )
  for (const b of u.first) lines.push(`  ${b.sha256}  ${bytes(b.size)}  written ${new Date(b.modifiedMs).toISOString()}`)
  if (u.count > u.first.length) lines.push(`  ... and ${count(u.count - u.first.length)} more`)
  // Said, not hidden among the referenced: a writer killed between its intent and its row holds bytes for a day.
  if (r.held.count) lines.push(`held by blob intents only: ${plural(r.held.count, 'blob')}, ${bytes(r.held.bytes)}`)
  const i = r.intents
  if (i.held) {
    const dropped = i.expired ? `; ${count(i.expired)} expired: the next sweep drops them` : ': a sweep drops an intent 24 hours old'
    lines.push(`blob intents: ${count(i.held)}, the oldest recorded ${i.oldest} (writers under way, or killed${dropped})`)
  }
  return lines
}

function sweepLines(r: SweepReport, hours: number, dryRun: boolean, bucket: boolean): string[] {
  const verb = dryRun ? 'would remove' : 'removed'
  const lines = [
    `${verb} ${plural(r.removed.count, 'unreferenced blob')}, ${bytes(r.removed.bytes)}, last written more than ${plural(hours, 'hour')} ago`,
  ]
  if (r.young.count) lines.push(`kept ${plural(r.young.count, 'unreferenced blob')}, ${bytes(r.young.bytes)}, written since`)
  if (r.linked.count) {
    lines.push(`kept ${plural(r.linked.count, 'unreferenced blob')}, ${bytes(r.linked.bytes)}, reached through symlinks (never deleted)`)
  }
  if (r.probes) lines.push(`${verb} ${plural(r.probes.count, 'probe object')}, ${bytes(r.probes.bytes)}`)
  if (r.intentsExpired) lines.push(`dropped ${plural(r.intentsExpired, 'expired blob intent')} (writers that did not finish)`)
  if (bucket) lines.push('incomplete multipart uploads are not listed: a bucket lifecycle rule removes them')
  return lines
}
