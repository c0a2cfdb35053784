/** Queries of the video proxy's tables: tasks by our id or the provider's, and staged images through their life (pending, uploading, ready, swept). */
import type { Insertable } from 'kysely'
import type { Store } from './db'
import type { StagedImageRow, StagedImageTable, VideoTaskRow, VideoTaskTable } from './schema'

/** Task states after which the stored record is final. */
export const FINISHED_STATES = ['success', 'failed'] as const

export async function insertVideoTask(db: Store, row: Insertable<VideoTaskTable>): Promise<void> {
  await db.insertInto('video_tasks').values(row).execute()
}

export function findVideoTask(db: Store, id: string): Promise<VideoTaskRow | undefined> {
  return db.selectFrom('video_tasks').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findVideoTaskByTaskId(db: Store, taskId: string): Promise<VideoTaskRow | undefined> {
  return db.selectFrom('video_tasks').selectAll().where('task_id', '=', taskId).executeTakeFirst()
}

/**
 * Records a task's latest report, unless the task has finished: checked in the statement, so that two reports
 * read before either was written cannot undo each other (a finished record is final).
 */
export async function updateVideoTask(
  db: Store,
  id: string,
  fields: Pick<VideoTaskRow, 'state' | 'err_code' | 'credits'>,
  now: string,
): Promise<void> {
  await db
    .updateTable('video_tasks')
    .set({ ...fields, updated_at: now })
    .where('id', '=', id)
    .where('state', 'not in', FINISHED_STATES)
    .execute()
}

export async function insertStagedImage(db: Store, row: Insertable<StagedImageTable>): Promise<void> {
  await db.insertInto('staged_images').values(row).execute()
}

export function findStagedImage(db: Store, id: string): Promise<StagedImageRow | undefined> {
  return db.selectFrom('staged_images').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Moves a pending image to uploading; false when another upload holds it or it is done (single use from the first byte). */
export async function claimStagedImage(db: Store, id: string): Promise<boolean> {
  const result = await db
    .updateTable('staged_images')
    .set({ state: 'uploading' })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** A failed upload frees the URL for a retry while it is valid. */
export async function releaseStagedImage(db: Store, id: string): Promise<void> {
  await db.updateTable('staged_images').set({ state: 'pending' }).where('id', '=', id).where('state', '=', 'uploading').execute()
}

export async function markStagedImageReady(
  db: Store,
  id: string,
  bytes: { sha256: string; size: number; mediaType: string },
  now: string,
): Promise<void> {
  await db
    .updateTable('staged_images')
    .set({ state: 'ready', sha256: bytes.sha256, size_bytes: bytes.size, media_type: bytes.mediaType, uploaded_at: now })
    .where('id', '=', id)
    .execute()
}

/** Deletes the images staged before `before`; returns how many, and the blobs they held. */
export async function deleteStagedImagesBefore(db: Store, before: string): Promise<{ count: number; blobs: string[] }> {
  const rows = await db.deleteFrom('staged_images').where('created_at', '<', before).returning('sha256').execute()
  return { count: rows.length, blobs: [...new Set(rows.map((r) => r.sha256).filter((sha): sha is string => sha !== null))] }
}
