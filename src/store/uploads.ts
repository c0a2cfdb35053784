/** Claims on signed uploads: the first PUT of a version's archive takes the claim; the database keeps it unique. */
import type { Store } from './db'
import { isUniqueViolation } from './db'

/**
 * True when this caller now holds the claim; false when another upload holds it (in flight or done). A claim last
 * renewed before `staleBefore` whose version has no archive is taken over: its upload died with its process.
 */
export async function claimUpload(db: Store, versionId: string, now: string, staleBefore: string): Promise<boolean> {
  try {
    await db.insertInto('upload_claims').values({ version_id: versionId, claimed_at: now }).execute()
    return true
  } catch (err) {
    if (!isUniqueViolation(err)) throw err
  }
  // One statement: of two PUTs taking over at once, the second finds the claim renewed by the first.
  const taken = await db
    .updateTable('upload_claims')
    .set({ claimed_at: now })
    .where('version_id', '=', versionId)
    .where('claimed_at', '<', staleBefore)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('archives').select('archives.version_id').whereRef('archives.version_id', '=', 'upload_claims.version_id'))),
    )
    .executeTakeFirst()
  return Number(taken.numUpdatedRows) === 1
}

/** An upload under way says it is alive: its claim is not taken for abandoned while it renews it. */
export async function renewUpload(db: Store, versionId: string, now: string): Promise<void> {
  await db.updateTable('upload_claims').set({ claimed_at: now }).where('version_id', '=', versionId).execute()
}

/**
 * Frees the claim of a failed upload. `stamps` are the times this upload wrote into its claim (taken, renewed): a
 * claim with any other time is another upload's, one that took this claim over once it went unrenewed.
 */
export async function releaseUpload(db: Store, versionId: string, stamps: readonly string[]): Promise<void> {
  if (stamps.length === 0) return
  await db.deleteFrom('upload_claims').where('version_id', '=', versionId).where('claimed_at', 'in', stamps).execute()
}

/** Claims older than `before` without an archive: their uploads died with a process (their URLs have expired). */
export async function releaseAbandonedUploads(db: Store, before: string): Promise<number> {
  const result = await db
    .deleteFrom('upload_claims')
    .where('claimed_at', '<', before)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('archives').select('archives.version_id').whereRef('archives.version_id', '=', 'upload_claims.version_id'))),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
