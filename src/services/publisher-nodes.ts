/**
 * A publisher's own nodes, by its owners and members: create one without a version, edit its metadata, delete
 * it or one of its versions (soft deletes: ids and version strings stay taken, and `latest_version` and install
 * move on), and what the web front end asks before it shows edit controls. Admins editing a node may also
 * moderate it there (status, owning publisher, ranking), as the front end's admin screens do.
 */
import { nodeIdProblem } from '../domain/ids'
import type { NodeJson } from '../domain/wire'
import { badRequest, conflict, notFound, publisherBanned } from '../errors'
import { isUniqueViolation } from '../store/db'
import { findNode, insertNode, moveNode, setNodeStatus, updateAdminNodeFields, updateNodeFields, type NodeFields } from '../store/nodes'
import type { NodeRow, PublisherRow } from '../store/schema'
import { updateVersion } from '../store/versions'
import { type Actor, holdPublisherForNode, holdsRole, requireLocal, requirePublisher, requireRole, requireUser } from './access'
import { commitWrite, type Write } from './changes'
import type { Deps } from './deps'
import { refreshLatest } from './latest'
import { moderateNodeIn } from './moderation'
import { renderNode, requirePublisherNode, requireVersionOfNode } from './nodes'

type Path = { publisherId: string; nodeId: string }

export async function createNode(deps: Deps, actor: Actor, publisherId: string, input: NodeFields & { id?: string }): Promise<NodeJson> {
  await requireRole(deps.db, actor, publisherId, 'member')
  await requireLocal(deps.db, { publisherId })
  const { id, ...fields } = input
  if (!id) throw badRequest('id: a node id is required', 'invalid_node_id')
  const problem = nodeIdProblem(id)
  if (problem) throw badRequest(`id: ${problem}`, 'invalid_node_id')
  const exists = () => conflict(`node "${id}" already exists (node ids are unique ignoring case, deleted nodes included)`, 'node_exists')
  if (await findNode(deps.db, id)) throw exists()
  try {
    await commitWrite(deps, async (w) => {
      await holdPublisherForNode(w.db, publisherId, publisherBanned)
      await insertNode(w.db, { id, publisherId, fields, now: w.now })
      w.node(id)
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw exists()
    throw err
  }
  return renderNode(deps, (await findNode(deps.db, id))!)
}

/** What only admins may change through a node edit; ignored when anyone else sends it. */
export interface AdminNodeEdit {
  status?: 'active' | 'banned'
  publisherId?: string
  search_ranking?: number
  tags_admin?: string[]
}

/**
 * The publisher an admin moves a node to, held (holdPublisherForNode) before the node's row, as every write that puts
 * a node into a publisher holds them: a delete of it on another instance waits for the move, or the move sees it.
 */
async function transferTarget(w: Write, to: string): Promise<PublisherRow> {
  return holdPublisherForNode(w.db, to).catch(() => {
    throw badRequest(`publisher.id: publisher "${to}" not found`)
  })
}

/** An admin moves a node to another publisher (the front end's "claim for a publisher"). */
async function transferIn(w: Write, actor: Actor, node: NodeRow, target: PublisherRow): Promise<void> {
  if (!(await moveNode(w.db, node.id, { from: node.publisher_id, to: target.id, statuses: ['active', 'banned'] }, w.now))) {
    throw conflict(`node "${node.id}" changed meanwhile; read it again`)
  }
  w.audit(actor, {
    action: 'node.transfer',
    targetKind: 'node',
    targetId: node.id,
    before: { publisher: node.publisher_id },
    after: { publisher: target.id },
  })
}

export async function editNode(
  deps: Deps,
  actor: Actor,
  path: Path,
  input: NodeFields & { id?: string } & AdminNodeEdit,
): Promise<NodeJson> {
  const { user } = await requireRole(deps.db, actor, path.publisherId, 'member')
  const node = await requirePublisherNode(deps, actor, path, { adminsMayModerate: true })
  // A mirrored node is edited upstream; admins moderate it here through the ban and unban routes.
  await requireLocal(deps.db, { nodeId: node.id })
  const { id, status, publisherId, search_ranking, tags_admin, ...fields } = input
  if (id !== undefined && id.toLowerCase() !== node.id.toLowerCase()) {
    throw badRequest(`id: "${id}" must be the node's id, "${node.id}" (ids cannot change)`)
  }
  const isAdmin = user.is_admin === 1
  const transfer = isAdmin && publisherId !== undefined && publisherId !== node.publisher_id ? publisherId : undefined
  await commitWrite(deps, async (w) => {
    const target = transfer === undefined ? undefined : await transferTarget(w, transfer)
    await updateNodeFields(w.db, node.id, fields, w.now)
    w.node(node.id)
    if (!isAdmin) return
    await updateAdminNodeFields(w.db, node.id, { search_ranking, tags_admin }, w.now)
    if (status !== undefined && status !== node.status) await moderateNodeIn(w, actor, node, status === 'banned' ? 'ban' : 'unban')
    if (target) await transferIn(w, actor, node, target)
  })
  return renderNode(deps, (await findNode(deps.db, node.id))!)
}

/** Soft delete: gone from reads, lists and search; the id stays taken. Admins may delete a banned node. */
export async function deleteNode(deps: Deps, actor: Actor, path: Path): Promise<void> {
  await requireRole(deps.db, actor, path.publisherId, 'member')
  const node = await requirePublisherNode(deps, actor, path, { adminsMayModerate: true })
  await requireLocal(deps.db, { nodeId: node.id })
  await commitWrite(deps, async (w) => {
    if (!(await setNodeStatus(w.db, node.id, { from: ['active', 'banned'], to: 'deleted' }, w.now)))
      throw notFound(`node "${node.id}" not found`)
    w.node(node.id)
    w.audit(actor, {
      action: 'node.delete',
      targetKind: 'node',
      targetId: node.id,
      before: { status: node.status, publisher: node.publisher_id },
    })
  })
}

/** Soft delete of a version: its string stays taken; `latest_version` and install move to the next one. */
export async function deleteVersion(deps: Deps, actor: Actor, path: Path & { versionId: string }): Promise<void> {
  await requireRole(deps.db, actor, path.publisherId, 'member')
  const node = await requirePublisherNode(deps, actor, path)
  await requireLocal(deps.db, { nodeId: node.id })
  const row = await requireVersionOfNode(deps, node, path.versionId)
  await commitWrite(deps, async (w) => {
    await updateVersion(w.db, row.id, { status: 'deleted' }, w.now)
    await refreshLatest(w.db, node.id, w.now)
    w.version(row.id, node.id)
    w.audit(actor, {
      action: 'version.delete',
      targetKind: 'version',
      targetId: row.id,
      before: { node: node.id, version: row.version, status: row.status },
    })
  })
}

/** Whether the caller may edit the node through this publisher (the front end shows edit controls then). */
export async function nodePermissions(deps: Deps, actor: Actor, path: Path): Promise<{ canEdit: boolean }> {
  requireUser(actor)
  const publisher = await requirePublisher(deps.db, path.publisherId)
  const user = actor.user?.status === 'active' ? actor.user : undefined
  const node = await findNode(deps.db, path.nodeId)
  const editable =
    node !== undefined &&
    node.publisher_id === publisher.id &&
    node.status !== 'deleted' &&
    publisher.status === 'active' &&
    (node.status === 'active' || user?.is_admin === 1)
  return { canEdit: editable && (await holdsRole(deps.db, user, publisher.id, 'member')) }
}
