/** Publishers and their members. */
import { newId } from '../domain/ids'
import type { Store } from './db'
import { preparedList } from './prepared'
import type { Insertable, Updateable } from 'kysely'
import type { MemberRow, PublisherRow, PublisherTable } from './schema'

/** Deleted publishers included (their ids stay taken): callers that serve them check `deleted_at`. */
export function findPublisher(db: Store, id: string): Promise<PublisherRow | undefined> {
  return db.selectFrom('publishers').selectAll().where('id', '=', id).executeTakeFirst()
}

/** A page of the publishers not deleted, in id order after `after` ('' for the first). */
export function listPublishers(db: Store, opts: { includeBanned: boolean; after: string; limit: number }): Promise<PublisherRow[]> {
  let q = db
    .selectFrom('publishers')
    .selectAll()
    .where('deleted_at', 'is', null)
    .where('id', '>', opts.after)
    .orderBy('id')
    .limit(opts.limit)
  if (!opts.includeBanned) q = q.where('status', '=', 'active')
  return q.execute()
}

const publishersByIds = preparedList<{}, PublisherRow>((db, _p, ids) => db.selectFrom('publishers').selectAll().where('id', 'in', ids))

export function listPublishersByIds(db: Store, ids: readonly string[]): Promise<PublisherRow[]> {
  return publishersByIds(db, {}, ids)
}

export function listPublishersOfUser(db: Store, userId: string): Promise<PublisherRow[]> {
  return db
    .selectFrom('publishers')
    .innerJoin('publisher_members', 'publisher_members.publisher_id', 'publishers.id')
    .selectAll('publishers')
    .where('publisher_members.user_id', '=', userId)
    .where('publishers.deleted_at', 'is', null)
    .orderBy('publishers.id')
    .execute()
}

export async function countPublishersOfUser(db: Store, userId: string): Promise<number> {
  const row = await db
    .selectFrom('publisher_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function insertPublisher(db: Store, row: Insertable<PublisherTable>): Promise<void> {
  await db.insertInto('publishers').values(row).execute()
}

export type PublisherChanges = Pick<
  Updateable<PublisherTable>,
  'name' | 'description' | 'website' | 'support' | 'source_code_repo' | 'logo'
>

export async function updatePublisher(db: Store, id: string, changes: PublisherChanges, now: string) {
  await db
    .updateTable('publishers')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .execute()
}

/** Moves the publisher from one status to the other; false when it was not in `from`. */
export async function setPublisherStatus(
  db: Store,
  id: string,
  change: { from: PublisherRow['status']; to: PublisherRow['status'] },
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('publishers')
    .set({ status: change.to, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', change.from)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Leaves a tombstone: the row stays (its deleted nodes point at it), its members and tokens go. False when already deleted. */
export async function markPublisherDeleted(db: Store, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('publishers')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
  if (!Number(result.numUpdatedRows)) return false
  await db.deleteFrom('publisher_members').where('publisher_id', '=', id).execute()
  await db.deleteFrom('publisher_tokens').where('publisher_id', '=', id).execute()
  return true
}

/** Adds a membership under an id of its own. */
export async function insertMember(db: Store, row: Omit<MemberRow, 'id'>): Promise<void> {
  await db
    .insertInto('publisher_members')
    .values({ ...row, id: newId() })
    .execute()
}

export function findMembership(db: Store, publisherId: string, userId: string): Promise<MemberRow | undefined> {
  return db
    .selectFrom('publisher_members')
    .selectAll()
    .where('publisher_id', '=', publisherId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
}

/** Members of the given publishers with the user's name and email, owners first. */
export interface MemberWithUser {
  id: string
  publisher_id: string
  user_id: string
  role: MemberRow['role']
  name: string
  email: string
}

const membersOf = preparedList<{}, MemberWithUser>((db, _p, publisherIds) =>
  db
    .selectFrom('publisher_members')
    .innerJoin('users', 'users.id', 'publisher_members.user_id')
    .select([
      'publisher_members.id',
      'publisher_members.publisher_id',
      'publisher_members.user_id',
      'publisher_members.role',
      'users.name',
      'users.email',
    ])
    .where('publisher_members.publisher_id', 'in', publisherIds)
    .orderBy('publisher_members.role', 'desc')
    .orderBy('publisher_members.user_id'),
)

/** Members of these publishers, owners first. Read in chunks, each in its order: callers group by publisher. */
export function listMembers(db: Store, publisherIds: readonly string[]): Promise<MemberWithUser[]> {
  return membersOf(db, {}, publisherIds)
}

export async function setMemberRole(db: Store, publisherId: string, userId: string, role: MemberRow['role']): Promise<void> {
  await db.updateTable('publisher_members').set({ role }).where('publisher_id', '=', publisherId).where('user_id', '=', userId).execute()
}
