/** Claims on signed uploads: the first PUT of a version's archive takes the claim; the database keeps it unique. */
import type { Store } from './db'
import { isUniqueViolation } from './db'

/** True when this caller now holds the claim; false when another upload holds it (in flight or done). */
export async function claimUpload(db: Store, versionId: string, now: string): Promise<boolean> {
  try {
    await db.insertInto('upload_claims').values({ version_id: versionId, claimed_at: now }).execute()
    return true
  } catch (err) {
    if (isUniqueViolation(err)) return false
    throw err
  }
}

export async function releaseUpload(db: Store, versionId: string): Promise<void> {
  await db.deleteFrom('upload_claims').where('version_id', '=', versionId).execute()
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
