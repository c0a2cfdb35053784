/**
 * Users' bearer access tokens: issued (shown once), listed masked, revoked, and resolved on every request. A
 * revoked or expired token identifies nobody from the next request on: resolving reads the store every time,
 * so a token revoked by the command line while a server runs stops working at once. Never cache this lookup.
 */
import { hashToken, maskToken, newId, newSecretToken } from '../domain/ids'
import { notFound } from '../errors'
import {
  findAccessToken,
  findTokenWithUser,
  insertAccessToken,
  listAccessTokensOfUser,
  recordTokenUse,
  revokeAccessToken,
} from '../store/access-tokens'
import type { AccessTokenRow, UserRow } from '../store/schema'
import { findUser } from '../store/users'
import type { Actor } from './access'
import { commitWrite, type Write, type WriteDeps } from './changes'
import { timestamp, type Deps } from './deps'

const DAY_MS = 24 * 60 * 60 * 1000
/** Last use is recorded at most this often per token: one small write per token every few minutes, not per request. */
export const LAST_USE_PRECISION_MS = 5 * 60 * 1000

export type TokenState = 'active' | 'expired' | 'revoked'

export interface AccessTokenView {
  id: string
  userId: string
  /** The first 4 characters then `***` (only `***` for tokens made before they were kept). */
  token: string
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
  state: TokenState
}

export function tokenState(row: Pick<AccessTokenRow, 'revoked_at' | 'expires_at'>, now: string): TokenState {
  if (row.revoked_at) return 'revoked'
  return row.expires_at !== null && row.expires_at <= now ? 'expired' : 'active'
}

const view = (row: AccessTokenRow, now: string): AccessTokenView => ({
  id: row.id,
  userId: row.user_id,
  token: maskToken(row.token_prefix),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
  state: tokenState(row, now),
})

/** Inside a write: makes a token for the user and records it (its id and expiry, never the token) in the audit log. */
export async function issueAccessToken(w: Write, actor: Actor | undefined, userId: string, expiresInDays?: number): Promise<string> {
  const token = newSecretToken()
  const id = newId()
  const expiresAt = expiresInDays === undefined ? null : new Date(Date.parse(w.now) + expiresInDays * DAY_MS).toISOString()
  await insertAccessToken(w.db, {
    id,
    token_hash: hashToken(token),
    token_prefix: token.slice(0, 4),
    user_id: userId,
    created_at: w.now,
    expires_at: expiresAt,
  })
  w.audit(actor, { action: 'access_token.create', targetKind: 'user', targetId: userId, after: { id, expiresAt } })
  return token
}

/** A new token for an existing user, shown once. */
export async function createAccessToken(
  deps: WriteDeps,
  actor: Actor | undefined,
  userId: string,
  opts: { expiresInDays?: number } = {},
): Promise<string> {
  if (!(await findUser(deps.db, userId))) throw notFound(`user "${userId}" not found`)
  return commitWrite(deps, (w) => issueAccessToken(w, actor, userId, opts.expiresInDays))
}

export async function listAccessTokens(deps: Pick<Deps, 'db' | 'now'>, userId: string): Promise<AccessTokenView[]> {
  if (!(await findUser(deps.db, userId))) throw notFound(`user "${userId}" not found`)
  const now = timestamp(deps)
  return (await listAccessTokensOfUser(deps.db, userId)).map((row) => view(row, now))
}

/** Revokes a token by id; revoking one already revoked changes nothing and says so. */
export async function revokeToken(
  deps: WriteDeps,
  actor: Actor | undefined,
  tokenId: string,
): Promise<{ token: AccessTokenView; alreadyRevoked: boolean }> {
  return commitWrite(deps, async (w) => {
    const before = await findAccessToken(w.db, tokenId)
    if (!before) throw notFound(`token "${tokenId}" not found`)
    const revoked = await revokeAccessToken(w.db, tokenId, w.now)
    if (revoked) w.audit(actor, { action: 'access_token.revoke', targetKind: 'user', targetId: before.user_id, before: { id: tokenId } })
    return { token: view((await findAccessToken(w.db, tokenId))!, w.now), alreadyRevoked: !revoked }
  })
}

/** The user a bearer token stands for, or why it stands for nobody (unknown, revoked, expired). */
export async function resolveBearer(deps: Deps, token: string): Promise<{ user: UserRow } | { problem: string }> {
  const found = await findTokenWithUser(deps.db, hashToken(token))
  if (!found) return { problem: 'invalid auth token' }
  const now = timestamp(deps)
  const state = tokenState(found.token, now)
  if (state !== 'active') return { problem: `auth token ${state}` }
  const since = new Date(Date.parse(now) - LAST_USE_PRECISION_MS).toISOString()
  // A read-only registry writes nothing, not even this bookkeeping.
  if (!deps.settings.readOnly && (found.token.last_used_at === null || found.token.last_used_at <= since)) {
    // Bookkeeping only: a failure here (the store busy) must not fail the request.
    await commitWrite(deps, (w) => recordTokenUse(w.db, found.token.id, w.now, since)).catch((err: Error) =>
      deps.log.warn('token.last_use_not_recorded', { token: found.token.id, error: err.message }),
    )
  }
  return { user: found.user }
}
