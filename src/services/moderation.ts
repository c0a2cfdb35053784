/**
 * What admins do to keep a registry clean: ban and unban nodes and publishers, and set any version's status.
 * A publisher ban bans its active nodes with it and marks them so, and its unban restores exactly those: a
 * node an admin banned on its own stays banned. User accounts are banned separately (the CLI).
 */
import { normalizeSemver } from '../domain/semver'
import { VERSION_STATUS, type VersionJson } from '../domain/wire'
import { notFound } from '../errors'
import { banNodesWithPublisher, findNode, restoreNodesBannedWithPublisher, setNodeStatus } from '../store/nodes'
import { setPublisherStatus } from '../store/publishers'
import type { NodeRow, VersionStatus } from '../store/schema'
import { findVersion, findVersionById, updateVersion } from '../store/versions'
import { type Actor, requireAdmin, requirePublisher } from './access'
import { commitWrite, type Write } from './changes'
import type { Deps } from './deps'
import { refreshLatest } from './latest'
import { renderVersions } from './views'

export type Moderation = 'ban' | 'unban'

/** Bans (a node banned only with its publisher becomes banned on its own) or unbans a node, in a write; false when nothing changed. */
export async function moderateNodeIn(w: Write, actor: Actor, node: NodeRow, action: Moderation, reason?: string): Promise<boolean> {
  const changed =
    action === 'ban'
      ? await setNodeStatus(w.db, node.id, { from: ['active'], to: 'banned', alsoIfBannedWithPublisher: true }, w.now)
      : await setNodeStatus(w.db, node.id, { from: ['banned'], to: 'active' }, w.now)
  if (!changed) return false
  w.node(node.id)
  w.audit(actor, {
    action: `node.${action}`,
    targetKind: 'node',
    targetId: node.id,
    before: { status: node.status, ...(node.banned_with_publisher === 1 && { banned_with_publisher: true }) },
    after: { status: action === 'ban' ? 'banned' : 'active', ...(reason && { reason }) },
  })
  return true
}

/** A node of the publisher in the path (deleted ones are gone: 404). */
async function requireModeratedNode(deps: Deps, publisherId: string, nodeId: string): Promise<NodeRow> {
  await requirePublisher(deps.db, publisherId)
  const node = await findNode(deps.db, nodeId)
  if (!node || node.status === 'deleted' || node.publisher_id !== publisherId) throw notFound(`node "${nodeId}" not found`)
  return node
}

export async function moderateNode(
  deps: Deps,
  actor: Actor,
  path: { publisherId: string; nodeId: string },
  action: Moderation,
  reason?: string,
): Promise<void> {
  requireAdmin(actor)
  const node = await requireModeratedNode(deps, path.publisherId, path.nodeId)
  await commitWrite(deps, (w) => moderateNodeIn(w, actor, node, action, reason))
}

/** Bans a publisher and its active nodes, or unbans it and restores exactly the nodes its ban made banned. */
export async function moderatePublisher(deps: Deps, actor: Actor, publisherId: string, action: Moderation, reason?: string): Promise<void> {
  requireAdmin(actor)
  await requirePublisher(deps.db, publisherId)
  await commitWrite(deps, async (w) => {
    const change =
      action === 'ban' ? { from: 'active' as const, to: 'banned' as const } : { from: 'banned' as const, to: 'active' as const }
    if (!(await setPublisherStatus(w.db, publisherId, change, w.now))) return
    const nodes =
      action === 'ban'
        ? await banNodesWithPublisher(w.db, publisherId, w.now)
        : await restoreNodesBannedWithPublisher(w.db, publisherId, w.now)
    w.publisher(publisherId)
    for (const id of nodes) w.node(id)
    w.audit(actor, {
      action: `publisher.${action}`,
      targetKind: 'publisher',
      targetId: publisherId,
      before: { status: change.from },
      after: { status: change.to, nodes, ...(reason && { reason }) },
    })
  })
}

/** Any status for any version (approving a pending upload, flagging, banning, restoring a deleted one), with its reason. */
export async function setVersionStatus(
  deps: Deps,
  actor: Actor,
  path: { nodeId: string; version: string },
  change: { status: VersionStatus; reason?: string },
): Promise<VersionJson> {
  requireAdmin(actor)
  const node = await findNode(deps.db, path.nodeId)
  if (!node || node.status === 'deleted') throw notFound(`node "${path.nodeId}" not found`)
  const row = await findVersion(deps.db, node.id, normalizeSemver(path.version) ?? path.version)
  if (!row) throw notFound(`version ${path.version} of node "${node.id}" not found`)
  const reason = change.reason ?? ''
  const updated = await commitWrite(deps, async (w) => {
    await updateVersion(w.db, row.id, { status: change.status, status_reason: reason }, w.now)
    await refreshLatest(w.db, node.id, w.now)
    w.version(row.id, node.id)
    w.audit(actor, {
      action: 'version.status',
      targetKind: 'version',
      targetId: row.id,
      before: { node: node.id, version: row.version, status: VERSION_STATUS[row.status], status_reason: row.status_reason },
      after: { status: VERSION_STATUS[change.status], status_reason: reason },
    })
    return (await findVersionById(w.db, row.id))!
  })
  const [json] = await renderVersions(deps.db, node, [updated], { publicUrl: deps.settings.publicUrl })
  return json!
}
