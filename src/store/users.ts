/** Users and their bearer access tokens (stored as hashes). */
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

export async function insertAccessToken(db: Store, userId: string, tokenHash: string, now: string) {
  await db.insertInto('access_tokens').values({ token_hash: tokenHash, user_id: userId, created_at: now }).execute()
}

export function findUserByTokenHash(db: Store, tokenHash: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('access_tokens')
    .innerJoin('users', 'users.id', 'access_tokens.user_id')
    .selectAll('users')
    .where('access_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst()
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
