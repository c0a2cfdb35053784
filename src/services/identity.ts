/** Users: created and listed from the command line; their wire shape. Their bearer tokens are in access-tokens.ts. */
import { USER_EMAIL_MAX, USER_ID_MESSAGE, USER_ID_PATTERN, USER_NAME_MAX } from '../domain/ids'
import type { UserJson } from '../domain/wire'
import { badRequest, conflict } from '../errors'
import type { UserRow } from '../store/schema'
import { findUser, insertUser, listUsersWithTokenCounts } from '../store/users'
import type { Actor } from './access'
import { issueAccessToken } from './access-tokens'
import { commitWrite, type WriteDeps } from './changes'
import { timestamp, type Deps } from './deps'

/** Creates a user and returns a new access token (shown once, stored as a hash); both go into the audit log. */
/** Refuses (400) a new user's id, name or email as given, before any store is opened or made for it. */
export function checkNewUser(input: { id: string; email: string; name: string }): void {
  if (!USER_ID_PATTERN.test(input.id)) throw badRequest(USER_ID_MESSAGE)
  if (input.name.length > USER_NAME_MAX) throw badRequest(`name must be at most ${USER_NAME_MAX} characters`)
  if (input.email.length > USER_EMAIL_MAX) throw badRequest(`email must be at most ${USER_EMAIL_MAX} characters`)
}

export async function createUser(
  deps: WriteDeps,
  actor: Actor | undefined,
  input: { id: string; email: string; name: string; isAdmin: boolean; expiresInDays?: number },
): Promise<string> {
  checkNewUser(input)
  if (await findUser(deps.db, input.id)) throw conflict(`user "${input.id}" already exists`, 'user_exists')
  return commitWrite(deps, async (w) => {
    await insertUser(w.db, { ...input, now: w.now })
    w.audit(actor, { action: 'user.create', targetKind: 'user', targetId: input.id, after: { name: input.name, isAdmin: input.isAdmin } })
    return issueAccessToken(w, actor, input.id, input.expiresInDays)
  })
}

export interface UserView {
  id: string
  name: string
  email: string
  isAdmin: boolean
  status: UserRow['status']
  createdAt: string
  /** Tokens neither revoked nor expired. */
  activeTokens: number
}

export async function listUsers(deps: Pick<Deps, 'db' | 'now'>): Promise<UserView[]> {
  const rows = await listUsersWithTokenCounts(deps.db, timestamp(deps))
  return rows.map((u) => ({
    id: u.id,
    name: u.name,
    email: u.email,
    isAdmin: u.is_admin === 1,
    status: u.status,
    createdAt: u.created_at,
    activeTokens: Number(u.active_tokens),
  }))
}

export function userJson(u: UserRow): UserJson {
  return { id: u.id, email: u.email, name: u.name, isAdmin: u.is_admin === 1, isApproved: u.is_approved === 1 }
}
