/** Node versions, their archives and the host node names extracted from them. */
import type { Store } from './db'
import type { Updateable } from 'kysely'
import type { ArchiveRow, NewVersionRow, NodeVersionTable, VersionRow, VersionStatus } from './schema'

export async function insertVersion(db: Store, row: NewVersionRow): Promise<void> {
  await db.insertInto('node_versions').values(row).execute()
}

export function findVersionById(db: Store, id: string): Promise<VersionRow | undefined> {
  return db.selectFrom('node_versions').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findVersion(db: Store, nodeId: string, version: string): Promise<VersionRow | undefined> {
  return db.selectFrom('node_versions').selectAll().where('node_id', '=', nodeId).where('version', '=', version).executeTakeFirst()
}

export function listVersionsOfNode(db: Store, nodeId: string, statuses?: readonly VersionStatus[]): Promise<VersionRow[]> {
  let q = db.selectFrom('node_versions').selectAll().where('node_id', '=', nodeId)
  if (statuses) q = q.where('status', 'in', statuses.length ? statuses : ['__none__' as VersionStatus])
  return q.execute()
}

export function listVersionsByIds(db: Store, ids: readonly string[]): Promise<VersionRow[]> {
  if (!ids.length) return Promise.resolve([])
  return db.selectFrom('node_versions').selectAll().where('id', 'in', ids).execute()
}

type VersionChanges = Pick<
  Updateable<NodeVersionTable>,
  'changelog' | 'deprecated' | 'status' | 'status_reason' | 'host_node_extract_status'
>

export async function updateVersion(db: Store, id: string, changes: VersionChanges, now: string) {
  await db
    .updateTable('node_versions')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .execute()
}

export async function insertArchive(db: Store, row: ArchiveRow): Promise<void> {
  await db.insertInto('archives').values(row).execute()
}

export function findArchive(db: Store, versionId: string): Promise<ArchiveRow | undefined> {
  return db.selectFrom('archives').selectAll().where('version_id', '=', versionId).executeTakeFirst()
}

export function listArchives(db: Store, versionIds: readonly string[]): Promise<ArchiveRow[]> {
  if (!versionIds.length) return Promise.resolve([])
  return db.selectFrom('archives').selectAll().where('version_id', 'in', versionIds).execute()
}

export async function insertHostNodes(db: Store, versionId: string, names: readonly string[]) {
  if (!names.length) return
  await db
    .insertInto('host_nodes')
    .values(names.map((name) => ({ version_id: versionId, name })))
    .onConflict((oc) => oc.doNothing())
    .execute()
}

export async function listHostNodes(db: Store, versionId: string): Promise<string[]> {
  const rows = await db.selectFrom('host_nodes').select('name').where('version_id', '=', versionId).orderBy('name').execute()
  return rows.map((r) => r.name)
}

export type VersionWithPublisher = VersionRow & { publisher_id: string }

/** One page of versions across nodes, newest first, with their node's publisher; deleted nodes never, banned ones on request. */
export async function pageVersions(
  db: Store,
  q: { nodeId?: string; statuses: readonly VersionStatus[]; includeBannedNodes: boolean; offset: number; limit: number },
): Promise<{ rows: VersionWithPublisher[]; total: number }> {
  let base = db
    .selectFrom('node_versions')
    .innerJoin('nodes', 'nodes.id', 'node_versions.node_id')
    .where('node_versions.status', 'in', q.statuses.length ? q.statuses : ['__none__' as VersionStatus])
    .where('nodes.status', 'in', q.includeBannedNodes ? ['active', 'banned'] : ['active'])
  if (q.nodeId !== undefined) base = base.where('nodes.normalized_id', '=', q.nodeId.toLowerCase())
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base
      .selectAll('node_versions')
      .select('nodes.publisher_id')
      .orderBy('node_versions.created_at', 'desc')
      .orderBy('node_versions.id')
      .offset(q.offset)
      .limit(q.limit)
      .execute(),
  ])
  return { rows, total: Number(count.n) }
}
