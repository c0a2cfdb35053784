/**
 * Blob intents and the lock that keeps `blobs sweep` from deleting bytes a writer is about to use. A writer records
 * an intent for the SHA-256 before it commits the bytes (or binds a row to bytes already stored), taking the sweep
 * lock shared; the sweep takes it exclusive while it checks a batch of hashes for rows and intents and deletes the
 * unreferenced ones. So an intent is either recorded before the sweep's check (which then sees it) or waits until
 * the deletion is done (and the writer's commit stores the bytes again). The writer drops its intent in the
 * transaction that writes its row, and fails that transaction if the intent has expired meanwhile.
 * SQLite: every write transaction holds the one write lock (begun IMMEDIATE), across processes: it is the sweep lock.
 * What rows and intents name a hash is looked up in store/blob-references.ts.
 */
import { sql, type Kysely } from 'kysely'
import { dialectOf, type Store } from './db'
import type { DB } from './schema'

/** A writer that has held an intent this long is taken for dead (a process killed mid-upload); its intent goes. */
export const INTENT_TTL_MS = 24 * 3600_000

/**
 * PostgreSQL advisory lock key of the sweep lock: an arbitrary number (the migration lock takes the two-key form, apart
 * from this one), never to be changed: instances of two versions side by side must take the same lock.
 */
const SWEEP_LOCK_KEY = '7092415491773214064'

const CHUNK = 500

/** Takes the sweep lock until the transaction ends: shared for writers recording intents, exclusive for the sweep. */
export async function holdSweepLock(trx: Kysely<DB>, mode: 'shared' | 'exclusive'): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return // SQLite: the transaction's write lock
  if (mode === 'shared') await sql`select pg_advisory_xact_lock_shared(${SWEEP_LOCK_KEY}::bigint)`.execute(trx)
  else await sql`select pg_advisory_xact_lock(${SWEEP_LOCK_KEY}::bigint)`.execute(trx)
}

/** Records intent `id` for these hashes, under the sweep lock (in a transaction of its own). */
export async function insertIntents(db: Store, id: string, sha256s: readonly string[], now: string): Promise<void> {
  const unique = [...new Set(sha256s)]
  await db.transaction().execute(async (trx) => {
    await holdSweepLock(trx, 'shared')
    for (let i = 0; i < unique.length; i += CHUNK) {
      const rows = unique.slice(i, i + CHUNK).map((sha256) => ({ id, sha256, created_at: now }))
      await trx.insertInto('blob_intents').values(rows).execute()
    }
  })
}

/** Drops intent `id`; returns how many of its hashes were still held (fewer than recorded: some expired). */
export async function deleteIntents(db: Kysely<DB>, id: string): Promise<number> {
  const result = await db.deleteFrom('blob_intents').where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Drops the intents recorded before `before` (their writers are gone); returns how many. */
export async function deleteIntentsBefore(db: Store, before: string): Promise<number> {
  const result = await db.deleteFrom('blob_intents').where('created_at', '<', before).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** The intents recorded, those recorded before `since` (expired: their writers are taken for dead), and the oldest. */
export async function intentSummary(db: Kysely<DB>, since: string): Promise<{ held: number; expired: number; oldest: string | null }> {
  const row = await db
    .selectFrom('blob_intents')
    .select((eb) => [
      eb.fn.countAll<number>().as('held'),
      eb.fn.sum<number>(eb.case().when('created_at', '<', since).then(1).else(0).end()).as('expired'),
      eb.fn.min('created_at').as('oldest'),
    ])
    .executeTakeFirstOrThrow()
  return { held: Number(row.held), expired: Number(row.expired ?? 0), oldest: row.oldest ?? null }
}
