/** Who may do what: the caller, publisher roles, bans. Every check throws the error clients expect. */
import { forbidden, notFound, permissionDenied, unauthorized } from '../errors'
import type { Store } from '../store/db'
import { findMembership, findPublisher } from '../store/publishers'
import type { PublisherRow, UserRow } from '../store/schema'

/** The caller of a request: the authenticated user, if any, and the client address. */
export interface Actor {
  user?: UserRow
  address: string
}

export function requireUser(actor: Actor): UserRow {
  if (!actor.user) throw unauthorized()
  return actor.user
}

/** A signed-in user who is not banned. */
export function requireActiveUser(actor: Actor): UserRow {
  const user = requireUser(actor)
  if (user.status === 'banned') throw forbidden('user/publisher is banned', 'user_banned')
  return user
}

export async function requirePublisher(db: Store, publisherId: string): Promise<PublisherRow> {
  const publisher = await findPublisher(db, publisherId)
  if (!publisher) throw notFound(`publisher "${publisherId}" not found`)
  return publisher
}

/** The publisher, when the active caller holds one of `roles` in it (admins pass too). */
export async function requireRole(
  db: Store,
  actor: Actor,
  publisherId: string,
  roles: readonly ('owner' | 'member')[],
): Promise<{ user: UserRow; publisher: PublisherRow }> {
  const user = requireActiveUser(actor)
  const publisher = await requirePublisher(db, publisherId)
  const membership = await findMembership(db, publisherId, user.id)
  if (!user.is_admin && (!membership || !roles.includes(membership.role))) throw permissionDenied()
  if (publisher.status === 'banned') throw forbidden('user/publisher is banned', 'publisher_banned')
  return { user, publisher }
}

export const isMember = async (db: Store, publisherId: string, user: UserRow | undefined) =>
  user !== undefined && (await findMembership(db, publisherId, user.id)) !== undefined
