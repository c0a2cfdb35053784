/**
 * `blobs check` and `blobs sweep`: the bytes in the blob store that no row needs, and the rows whose bytes are gone.
 * Memory stays flat whatever the store's size: the listing is streamed in hash order, merged with the hashes rows
 * need (read from the database in pages, in the same order), and candidates are looked up a batch at a time.
 * Deleting is decided and done under the sweep lock, a small batch at a time (store/blob-intents.ts says why).
 */
import type { BlobInfo, BlobStore } from '../blobs/blob-store'
import { deleteIntentsBefore, holdSweepLock, INTENT_TTL_MS, intentSummary } from '../store/blob-intents'
import { countNeeding, neededHashes, referencedAmong, versionsNaming } from '../store/blob-references'
import { dialectOf, type Store } from '../store/db'
import { inWriteTurn } from './write-turn'

/** Hashes looked up at once outside the lock. */
const LOOKUP_BATCH = 500
/**
 * Hashes decided and deleted per hold of the lock: writers recording intents wait that long (and on SQLite every
 * write of a server waits, at most 5 s before it fails), so a hold stays short even on object storage.
 */
const LOCKED_BATCH = 20

export interface SweepDeps {
  db: Store
  blobs: BlobStore
}

/** For tests: runs between the decision on a batch and the deletion of its bytes, inside the lock. */
export interface SweepHooks {
  beforeDelete?(sha256s: readonly string[]): Promise<void>
}

/**
 * Deletes those of these blobs that no row and no live intent names, decided and deleted under the sweep lock;
 * returns the hashes deleted (with `dryRun`, those that would be).
 */
export async function deleteUnreferenced(
  deps: SweepDeps,
  sha256s: readonly string[],
  opts: { dryRun?: boolean; intentsSince?: string; hooks?: SweepHooks } = {},
): Promise<string[]> {
  const deleted: string[] = []
  for (let i = 0; i < sha256s.length; i += LOCKED_BATCH) {
    const part = sha256s.slice(i, i + LOCKED_BATCH)
    const gone = await inWriteTurn(deps.db, () =>
      decidingTransaction(deps.db).execute(async (trx) => {
        await holdSweepLock(trx, 'exclusive')
        const referenced = await referencedAmong(trx, part, opts.intentsSince)
        const unreferenced = part.filter((sha) => !referenced.has(sha))
        if (opts.dryRun || !unreferenced.length) return unreferenced
        await opts.hooks?.beforeDelete?.(unreferenced)
        for (const sha of unreferenced) await deps.blobs.delete(sha)
        return unreferenced
      }),
    )
    deleted.push(...gone)
  }
  return deleted
}

/**
 * The transaction that takes the sweep lock and then looks for rows and intents: read committed on PostgreSQL whatever
 * the database's default. Under repeatable read or serializable (an operator's `default_transaction_isolation`), the
 * snapshot is taken by the first statement, the wait for the lock: an intent committed during that wait was not seen,
 * and its bytes were deleted. SQLite's write lock is taken at BEGIN, before anything is read.
 */
function decidingTransaction(db: Store) {
  return dialectOf(db) === 'postgres' ? db.transaction().setIsolationLevel('read committed') : db.transaction()
}

/** The store's listing, checked to come in ascending hash order (the merge with the rows' hashes needs it). */
async function* inOrder(blobs: BlobStore): AsyncGenerator<BlobInfo> {
  let last = ''
  for await (const blob of blobs.inventory()) {
    if (blob.sha256 <= last) throw new Error('the blob store does not list in ascending SHA-256 order')
    last = blob.sha256
    yield blob
  }
}

interface Scan {
  stored: { count: number; bytes: number }
  /** Called with every stored blob that no row written before the scan began needs, in batches. */
  onCandidates(batch: BlobInfo[]): Promise<void>
  /** Called with every hash rows need whose bytes are not stored, in batches. */
  onMissing?(batch: string[]): Promise<void>
}

/** One pass over the listing, merged with the hashes rows written before `before` need. */
async function scan(deps: SweepDeps, before: string, s: Scan): Promise<void> {
  const needed = neededHashes(deps.db, before)
  let need = (await needed.next()).value as string | undefined
  let candidates: BlobInfo[] = []
  let missing: string[] = []
  const miss = async (sha: string) => {
    missing.push(sha)
    if (missing.length < LOOKUP_BATCH) return
    await s.onMissing?.(missing)
    missing = []
  }
  for await (const blob of inOrder(deps.blobs)) {
    s.stored.count++
    s.stored.bytes += blob.size
    while (need !== undefined && need < blob.sha256) {
      await miss(need)
      need = (await needed.next()).value as string | undefined
    }
    if (need === blob.sha256) {
      need = (await needed.next()).value as string | undefined
      continue
    }
    candidates.push(blob)
    if (candidates.length >= LOOKUP_BATCH) {
      await s.onCandidates(candidates)
      candidates = []
    }
  }
  while (need !== undefined) {
    await miss(need)
    need = (await needed.next()).value as string | undefined
  }
  if (candidates.length) await s.onCandidates(candidates)
  if (missing.length) await s.onMissing?.(missing)
}

export interface CheckReport {
  stored: { count: number; bytes: number }
  unreferenced: { count: number; bytes: number; first: BlobInfo[] }
  /** Stored blobs no row names but a live intent holds: a writer under way, or a killed one's until its intent expires. */
  held: { count: number; bytes: number }
  /** The intents recorded; `expired` ones are a sweep's to drop (their bytes are then unreferenced). */
  intents: { held: number; expired: number; oldest: string | null }
  missing: { hashes: number; archives: number; images: number; first: { sha256: string; version: string }[] }
}

/** What `blobs check` reports; `listed` caps each list (the counts are whole). */
export async function checkBlobs(deps: SweepDeps, opts: { now: Date; listed: number }): Promise<CheckReport> {
  const before = opts.now.toISOString()
  const intentsSince = new Date(opts.now.getTime() - INTENT_TTL_MS).toISOString()
  const report: CheckReport = {
    stored: { count: 0, bytes: 0 },
    unreferenced: { count: 0, bytes: 0, first: [] },
    held: { count: 0, bytes: 0 },
    intents: await intentSummary(deps.db, intentsSince),
    missing: { hashes: 0, archives: 0, images: 0, first: [] },
  }
  await scan(deps, before, {
    stored: report.stored,
    async onCandidates(batch) {
      const referenced = await referencedAmong(
        deps.db,
        batch.map((b) => b.sha256),
        intentsSince,
      )
      // Of those, the ones only intents hold (a row written since the scan began counts as a row).
      const byRows = await referencedAmong(
        deps.db,
        batch.filter((b) => referenced.has(b.sha256)).map((b) => b.sha256),
        null,
      )
      for (const blob of batch) {
        if (referenced.has(blob.sha256)) {
          if (!byRows.has(blob.sha256)) {
            report.held.count++
            report.held.bytes += blob.size
          }
          continue
        }
        report.unreferenced.count++
        report.unreferenced.bytes += blob.size
        if (report.unreferenced.first.length < opts.listed) report.unreferenced.first.push(blob)
      }
    },
    async onMissing(batch) {
      const counts = await countNeeding(deps.db, batch, before)
      report.missing.hashes += batch.length
      report.missing.archives += counts.archives
      report.missing.images += counts.images
      const room = opts.listed - report.missing.first.length
      if (room > 0) report.missing.first.push(...(await versionsNaming(deps.db, batch, room)))
    },
  })
  return report
}

export interface SweepReport {
  removed: { count: number; bytes: number }
  /** Unreferenced but younger than the grace: left for a later sweep. */
  young: { count: number; bytes: number }
  /** Unreferenced but reached through a symlink (on disk): never deleted, said. */
  linked: { count: number; bytes: number }
  intentsExpired: number
  probes?: { count: number; bytes: number }
}

/**
 * `blobs sweep`: removes (or with `dryRun`, counts) the blobs no row and no live intent names that were last written
 * more than `olderThanMs` ago, and object storage's probe leftovers as old. Intents older than INTENT_TTL_MS are
 * dropped first (their writers are gone; a writer still alive then fails its row's transaction).
 */
export async function sweepBlobs(
  deps: SweepDeps,
  opts: { now: Date; olderThanMs: number; dryRun: boolean; hooks?: SweepHooks },
): Promise<SweepReport> {
  const intentsSince = new Date(opts.now.getTime() - INTENT_TTL_MS).toISOString()
  const intentsExpired = opts.dryRun ? 0 : await inWriteTurn(deps.db, () => deleteIntentsBefore(deps.db, intentsSince))
  const oldBefore = opts.now.getTime() - opts.olderThanMs
  const report: SweepReport = {
    removed: { count: 0, bytes: 0 },
    young: { count: 0, bytes: 0 },
    linked: { count: 0, bytes: 0 },
    intentsExpired,
  }
  await scan(deps, opts.now.toISOString(), {
    stored: { count: 0, bytes: 0 },
    async onCandidates(batch) {
      // A first look outside the lock, to hold it for the few that are candidates indeed.
      const referenced = await referencedAmong(
        deps.db,
        batch.map((b) => b.sha256),
        intentsSince,
      )
      const sizes = new Map<string, number>()
      for (const blob of batch) {
        if (referenced.has(blob.sha256)) continue
        if (blob.linked) {
          report.linked.count++
          report.linked.bytes += blob.size
        } else if (blob.modifiedMs >= oldBefore) {
          report.young.count++
          report.young.bytes += blob.size
        } else sizes.set(blob.sha256, blob.size)
      }
      const gone = await deleteUnreferenced(deps, [...sizes.keys()], { dryRun: opts.dryRun, intentsSince, hooks: opts.hooks })
      for (const sha of gone) {
        report.removed.count++
        report.removed.bytes += sizes.get(sha)!
      }
    },
  })
  if (deps.blobs.sweepProbes) report.probes = await deps.blobs.sweepProbes(opts.olderThanMs, { dryRun: opts.dryRun })
  return report
}
