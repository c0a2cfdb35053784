/** Users' bearer access tokens: kept as a hash with a 4-character prefix to show; expiry, last use, revocation. */
import type { Insertable } from 'kysely'
import type { Store } from './db'
import type { AccessTokenRow, AccessTokenTable, UserRow } from './schema'

export async function insertAccessToken(db: Store, row: Insertable<AccessTokenTable>): Promise<void> {
  await db.insertInto('access_tokens').values(row).execute()
}

/** The token with this hash and its user, whatever the token's state (the caller decides what revoked or expired means). */
export async function findTokenWithUser(db: Store, tokenHash: string): Promise<{ token: AccessTokenRow; user: UserRow } | undefined> {
  const row = await db
    .selectFrom('access_tokens')
    .innerJoin('users', 'users.id', 'access_tokens.user_id')
    .selectAll('users')
    .select([
      'access_tokens.id as t_id',
      'access_tokens.token_hash as t_token_hash',
      'access_tokens.token_prefix as t_token_prefix',
      'access_tokens.created_at as t_created_at',
      'access_tokens.expires_at as t_expires_at',
      'access_tokens.last_used_at as t_last_used_at',
      'access_tokens.revoked_at as t_revoked_at',
    ])
    .where('access_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst()
  if (!row) return undefined
  const { t_id, t_token_hash, t_token_prefix, t_created_at, t_expires_at, t_last_used_at, t_revoked_at, ...user } = row
  const token: AccessTokenRow = {
    id: t_id,
    token_hash: t_token_hash,
    token_prefix: t_token_prefix,
    user_id: user.id,
    created_at: t_created_at,
    expires_at: t_expires_at,
    last_used_at: t_last_used_at,
    revoked_at: t_revoked_at,
  }
  return { token, user }
}

export function findAccessToken(db: Store, id: string): Promise<AccessTokenRow | undefined> {
  return db.selectFrom('access_tokens').selectAll().where('id', '=', id).executeTakeFirst()
}

export function listAccessTokensOfUser(db: Store, userId: string): Promise<AccessTokenRow[]> {
  return db.selectFrom('access_tokens').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute()
}

/** Revokes the token unless it already was; true when this call revoked it. */
export async function revokeAccessToken(db: Store, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('access_tokens')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Records a use at `now` unless one after `since` is recorded already (another request may have just done it). */
export async function recordTokenUse(db: Store, id: string, now: string, since: string): Promise<void> {
  await db
    .updateTable('access_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', since)]))
    .execute()
}
