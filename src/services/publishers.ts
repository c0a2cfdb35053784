/** Publishers: create, update, read, list, and the id availability check. */
import { PUBLISHER_ID_MAX, PUBLISHER_ID_MESSAGE, PUBLISHER_ID_PATTERN } from '../domain/ids'
import type { PublisherJson } from '../domain/wire'
import { badRequest, conflict, forbidden, notFound } from '../errors'
import { breathe } from '../store/bulk'
import { isUniqueViolation, type Store } from '../store/db'
import { countLiveNodesOfPublisher } from '../store/nodes'
import {
  countPublishersOfUser,
  findPublisher,
  insertMember,
  insertPublisher,
  listMembers,
  listPublishers,
  markPublisherDeleted,
  listPublishersOfUser,
  updatePublisher,
  type PublisherChanges,
} from '../store/publishers'
import { lockPublisher, lockUser } from '../store/row-locks'
import { type Actor, holdsRole, requireActiveUser, requireLocal, requirePublisher, requireRole, requireUser } from './access'
import { commitWrite } from './changes'
import type { Deps } from './deps'
import { renderPublishers } from './views'

export type PublisherInput = PublisherChanges & { id?: string }

function checkPublisherId(id: string | undefined): string {
  if (!id) throw badRequest('id: a publisher id is required')
  if (id.length > PUBLISHER_ID_MAX || !PUBLISHER_ID_PATTERN.test(id)) {
    throw badRequest(
      id.length > PUBLISHER_ID_MAX ? `id: at most ${PUBLISHER_ID_MAX} characters` : PUBLISHER_ID_MESSAGE,
      'invalid_publisher_id',
    )
  }
  return id
}

async function checkPublisherLimit(deps: Deps, db: Store, userId: string) {
  if ((await countPublishersOfUser(db, userId)) >= deps.settings.maxPublishersPerUser) {
    throw forbidden('User has reached the maximum number of publishers.', 'publisher_limit')
  }
}

export async function createPublisher(deps: Deps, actor: Actor, input: PublisherInput): Promise<PublisherJson> {
  const user = requireActiveUser(actor)
  const id = checkPublisherId(input.id)
  if (!input.name?.trim()) throw badRequest('name: a publisher name is required')
  // Its owners would own every node put there to be claimed (moved there by an admin, loaded from a fixture).
  if (id === deps.settings.unclaimedPublisherId && user.is_admin !== 1) {
    throw forbidden('the unclaimed publisher is made by an admin', 'reserved_publisher_id')
  }
  await checkPublisherLimit(deps, deps.db, user.id)
  if (await findPublisher(deps.db, id)) throw conflict('Publisher ID already exists.', 'publisher_exists')
  try {
    await commitWrite(deps, async (w) => {
      // Again in the write, the user's row held: creations sent at once would all have passed the count above.
      await lockUser(w.db, user.id)
      await checkPublisherLimit(deps, w.db, user.id)
      const now = w.now
      await insertPublisher(w.db, {
        id,
        name: input.name!.trim(),
        description: input.description ?? '',
        website: input.website ?? '',
        support: input.support ?? '',
        source_code_repo: input.source_code_repo ?? '',
        logo: input.logo ?? '',
        status: 'active',
        created_at: now,
        updated_at: now,
      })
      await insertMember(w.db, { publisher_id: id, user_id: user.id, role: 'owner', created_at: now })
      w.publisher(id)
      w.audit(actor, { action: 'publisher.create', targetKind: 'publisher', targetId: id, after: { owner: user.id } })
    })
  } catch (err) {
    // Two creations of one id at once: the database lets one win.
    if (isUniqueViolation(err)) throw conflict('Publisher ID already exists.', 'publisher_exists')
    throw err
  }
  return getPublisher(deps, actor, id)
}

export async function updatePublisherFields(deps: Deps, actor: Actor, id: string, input: PublisherInput) {
  await requireRole(deps.db, actor, id, 'owner')
  await requireLocal(deps.db, { publisherId: id })
  const { name, description, website, support, source_code_repo, logo } = input
  const changes = { name, description, website, support, source_code_repo, logo }
  for (const key of Object.keys(changes) as (keyof typeof changes)[]) if (changes[key] === undefined) delete changes[key]
  if (changes.name !== undefined && !changes.name.trim()) throw badRequest('name: must not be empty')
  await commitWrite(deps, async (w) => {
    await updatePublisher(w.db, id, changes, w.now)
    w.publisher(id)
  })
  return getPublisher(deps, actor, id)
}

export async function getPublisher(deps: Deps, actor: Actor, id: string): Promise<PublisherJson> {
  const publisher = await requirePublisher(deps.db, id)
  const [json] = await renderPublishers(deps.db, [publisher], actor.user)
  return json!
}

/** Publishers rendered in one step of the whole list: 28,000 at once held the event loop 0.19-0.21 s. */
const PUBLISHERS_PER_STEP = 1000

/**
 * Every publisher (banned ones to admins), as the JSON text of one array as upstream answers it, rendered a step at
 * a time with breaths between steps.
 */
export async function allPublishersJson(deps: Deps, actor: Actor): Promise<string> {
  const includeBanned = actor.user?.is_admin === 1
  const parts: string[] = []
  for (let after = ''; ; await breathe()) {
    const rows = await listPublishers(deps.db, { includeBanned, after, limit: PUBLISHERS_PER_STEP })
    if (rows.length) parts.push(JSON.stringify(await renderPublishers(deps.db, rows, actor.user)).slice(1, -1))
    if (rows.length < PUBLISHERS_PER_STEP) return `[${parts.join(',')}]`
    after = rows[rows.length - 1]!.id
  }
}

export async function listMyPublishers(deps: Deps, actor: Actor): Promise<PublisherJson[]> {
  const user = requireActiveUser(actor)
  return renderPublishers(deps.db, await listPublishersOfUser(deps.db, user.id), user)
}

/** The upstream answers 400 for every unavailable id, and never `isAvailable: false`. */
export async function validatePublisherId(deps: Deps, username: string | undefined) {
  if (!username) throw badRequest('Username parameter is required')
  checkPublisherId(username)
  if (await findPublisher(deps.db, username)) throw badRequest('Publisher ID already exists.', 'publisher_exists')
  return { isAvailable: true }
}

/**
 * Deletes a publisher that has no live nodes (409 otherwise): it stays as a tombstone (its deleted nodes still
 * belong to it, and its id stays taken); its members and tokens are removed, so its tokens stop working at once.
 */
export async function deletePublisher(deps: Deps, actor: Actor, id: string): Promise<void> {
  await requireRole(deps.db, actor, id, 'owner')
  await requireLocal(deps.db, { publisherId: id })
  await commitWrite(deps, async (w) => {
    // Held before the count: a node put into it meanwhile on another instance is counted, or refused (404) there.
    await lockPublisher(w.db, id)
    const live = await countLiveNodesOfPublisher(w.db, id)
    if (live) {
      throw conflict(
        `publisher "${id}" still has ${live} node${live === 1 ? '' : 's'}: delete ${live === 1 ? 'it' : 'them'} first`,
        'publisher_not_empty',
      )
    }
    const members = (await listMembers(w.db, [id])).map((m) => ({ user: m.user_id, role: m.role }))
    if (!(await markPublisherDeleted(w.db, id, w.now))) throw notFound(`publisher "${id}" not found`)
    w.publisher(id)
    w.audit(actor, { action: 'publisher.delete', targetKind: 'publisher', targetId: id, before: { members } })
  })
}

/** Whether the caller may edit the publisher itself (owners and admins, while both are in good standing). */
export async function publisherPermissions(deps: Deps, actor: Actor, id: string): Promise<{ canEdit: boolean }> {
  requireUser(actor)
  const publisher = await requirePublisher(deps.db, id)
  const user = actor.user?.status === 'active' ? actor.user : undefined
  return { canEdit: publisher.status === 'active' && (await holdsRole(deps.db, user, id, 'owner')) }
}
