/** Users and bearer access tokens: created from the CLI, resolved on every request. */
import { hashToken, newSecretToken, USER_ID_MESSAGE, USER_ID_PATTERN } from '../domain/ids'
import type { UserJson } from '../domain/wire'
import { badRequest, conflict, notFound } from '../errors'
import type { Store } from '../store/db'
import type { UserRow } from '../store/schema'
import { findUser, findUserByTokenHash, insertAccessToken, insertUser } from '../store/users'

/** Creates a user and returns a new access token (shown once, stored as a hash). */
export async function createUser(
  db: Store,
  input: { id: string; email: string; name: string; isAdmin: boolean; now: string },
): Promise<string> {
  if (!USER_ID_PATTERN.test(input.id)) throw badRequest(USER_ID_MESSAGE)
  if (await findUser(db, input.id)) throw conflict(`user "${input.id}" already exists`, 'user_exists')
  return db.transaction().execute(async (trx) => {
    await insertUser(trx, input)
    return issueToken(trx, input.id, input.now)
  })
}

export async function createAccessToken(db: Store, userId: string, now: string): Promise<string> {
  if (!(await findUser(db, userId))) throw notFound(`user "${userId}" not found`)
  return issueToken(db, userId, now)
}

async function issueToken(db: Store, userId: string, now: string): Promise<string> {
  const token = newSecretToken()
  await insertAccessToken(db, userId, hashToken(token), now)
  return token
}

/** The user a bearer token belongs to, or undefined for an unknown token. */
export function userForToken(db: Store, token: string): Promise<UserRow | undefined> {
  return findUserByTokenHash(db, hashToken(token))
}

export function userJson(u: UserRow): UserJson {
  return { id: u.id, email: u.email, name: u.name, isAdmin: u.is_admin === 1, isApproved: u.is_approved === 1 }
}
