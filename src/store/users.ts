/** Users: created from the command line, listed for operators. */
import type { Store } from './db'
import type { UserRow } from './schema'

export async function insertUser(
  db: Store,
  user: { id: string; email: string; name: string; isAdmin: boolean; now: string },
): Promise<void> {
  await db
    .insertInto('users')
    .values({
      id: user.id,
      email: user.email,
      name: user.name,
      is_admin: user.isAdmin ? 1 : 0,
      is_approved: 1,
      status: 'active',
      created_at: user.now,
      updated_at: user.now,
    })
    .execute()
}

export function findUser(db: Store, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Every user in id order, with how many of their tokens still work at `now`. */
export function listUsersWithTokenCounts(db: Store, now: string): Promise<(UserRow & { active_tokens: number })[]> {
  return db
    .selectFrom('users')
    .leftJoin('access_tokens', (join) =>
      join
        .onRef('access_tokens.user_id', '=', 'users.id')
        .on('access_tokens.revoked_at', 'is', null)
        .on((eb) => eb.or([eb('access_tokens.expires_at', 'is', null), eb('access_tokens.expires_at', '>', now)])),
    )
    .selectAll('users')
    .select((eb) => eb.fn.count<number>('access_tokens.id').as('active_tokens'))
    .groupBy('users.id')
    .orderBy('users.id')
    .execute()
}

/** Sets an account's admin flag or status; false for an unknown user. */
export async function updateUser(
  db: Store,
  id: string,
  changes: Partial<Pick<UserRow, 'is_admin' | 'status'>>,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}
