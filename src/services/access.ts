/**
 * Who may do what: one model for every write. A caller is anonymous or a user; a user is active or banned,
 * an admin or not, and holds a role (owner or member) in some publishers. Writes need an active user;
 * owner actions need an owner, member actions an owner or member; admins pass every role check; nothing
 * but moderation acts on a banned publisher. Each check throws the error clients expect. Mirrored publishers
 * and nodes are read-only here: their content comes from their upstream (claims and moderation still apply).
 */
import { withoutUrlSecrets } from '../domain/urls'
import { forbidden, notAdmin, notFound, permissionDenied, publisherBanned, unauthorized, userBanned } from '../errors'
import type { Store } from '../store/db'
import { findOrigin } from '../store/mirror-entities'
import { findMembership, findPublisher } from '../store/publishers'
import { sharePublisher } from '../store/row-locks'
import type { PublisherRow, UserRow } from '../store/schema'

/** The caller of a request: the authenticated user, if any, and the client address. */
export interface Actor {
  user?: UserRow
  address: string
  /** Why a credential that was sent did not identify anyone; public reads treat such a caller as anonymous. */
  credentialProblem?: string
}

export type PublisherRole = 'owner' | 'member'

export function requireUser(actor: Actor): UserRow {
  if (!actor.user) throw unauthorized(actor.credentialProblem)
  return actor.user
}

/** A signed-in user who is not banned: every write needs one. */
export function requireActiveUser(actor: Actor): UserRow {
  const user = requireUser(actor)
  if (user.status === 'banned') throw userBanned()
  return user
}

export function requireAdmin(actor: Actor): UserRow {
  const user = requireActiveUser(actor)
  if (user.is_admin !== 1) throw notAdmin()
  return user
}

/** A publisher that exists and was not deleted. */
export async function requirePublisher(db: Store, publisherId: string): Promise<PublisherRow> {
  const publisher = await findPublisher(db, publisherId)
  if (!publisher || publisher.deleted_at !== null) throw notFound(`publisher "${publisherId}" not found`)
  return publisher
}

/**
 * The publisher again, in a write that puts a node into it, once it holds the publisher's row (sharePublisher): a
 * delete or a ban that committed since the checks before the write is seen here (404, or `banned` when given), and
 * one that comes later waits for this write and sees its node.
 */
export async function holdPublisherForNode(db: Store, publisherId: string, banned?: () => Error): Promise<PublisherRow> {
  await sharePublisher(db, publisherId)
  const publisher = await requirePublisher(db, publisherId)
  if (banned && publisher.status === 'banned') throw banned()
  return publisher
}

/** Whether the user may act with `role` in the publisher (admins always may). */
export async function holdsRole(db: Store, user: UserRow | undefined, publisherId: string, role: PublisherRole): Promise<boolean> {
  if (!user) return false
  if (user.is_admin === 1) return true
  const membership = await findMembership(db, publisherId, user.id)
  return membership !== undefined && (role === 'member' || membership.role === 'owner')
}

/** The publisher, when the active caller may act in it with `role`; a banned publisher refuses every such write. */
export async function requireRole(
  db: Store,
  actor: Actor,
  publisherId: string,
  role: PublisherRole,
): Promise<{ user: UserRow; publisher: PublisherRow }> {
  const user = requireActiveUser(actor)
  const publisher = await requirePublisher(db, publisherId)
  if (!(await holdsRole(db, user, publisherId, role))) throw permissionDenied()
  if (publisher.status === 'banned') throw publisherBanned()
  return { user, publisher }
}

/**
 * Refuses local writes to a mirrored publisher or node (403 `mirrored_read_only`): what it holds comes from its
 * upstream, and the next sync would undo the write. Every write route that changes a publisher's or a node's
 * content calls this; claims and admin moderation do not (they stay as made here, see services/mirror/apply.ts).
 */
export async function requireLocal(db: Store, target: { publisherId?: string; nodeId?: string }): Promise<void> {
  const checks = [
    { kind: 'publisher' as const, id: target.publisherId },
    { kind: 'node' as const, id: target.nodeId },
  ].filter((c): c is { kind: 'publisher' | 'node'; id: string } => c.id !== undefined)
  for (const c of checks) {
    const origin = await findOrigin(db, c.kind, c.id)
    if (origin) {
      // Said to anyone (a review needs no account): the address without the credentials an old store's may hold.
      const from = withoutUrlSecrets(origin.mirror_source_id!) // found: it has one
      throw forbidden(`${c.kind} "${c.id}" is mirrored from ${from}: it is read-only here`, 'mirrored_read_only')
    }
  }
}
