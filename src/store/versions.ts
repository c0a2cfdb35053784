/** Node versions, their archives and the host node names extracted from them. */
import type { NodeHead } from './nodes'
import type { Store } from './db'
import { prepared, preparedList } from './prepared'
import { sql, type ExpressionBuilder, type StringReference, type Updateable } from 'kysely'
import type { ArchiveRow, DB, NewVersionRow, NodeRow, NodeVersionTable, VersionRow, VersionStatus } from './schema'

export async function insertVersion(db: Store, row: NewVersionRow): Promise<void> {
  await db.insertInto('node_versions').values(row).execute()
}

export function findVersionById(db: Store, id: string): Promise<VersionRow | undefined> {
  return db.selectFrom('node_versions').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findVersion(db: Store, nodeId: string, version: string): Promise<VersionRow | undefined> {
  return db.selectFrom('node_versions').selectAll().where('node_id', '=', nodeId).where('version', '=', version).executeTakeFirst()
}

const versionsOfNode = prepared<{ nodeId: string }, VersionRow>((db, p) =>
  db.selectFrom('node_versions').selectAll().where('node_id', '=', p.nodeId),
)
const versionsOfNodeIn = preparedList<{ nodeId: string }, VersionRow>((db, p, statuses) =>
  db
    .selectFrom('node_versions')
    .selectAll()
    .where('node_id', '=', p.nodeId)
    .where('status', 'in', statuses as VersionStatus[]),
)

export function listVersionsOfNode(db: Store, nodeId: string, statuses?: readonly VersionStatus[]): Promise<VersionRow[]> {
  if (!statuses) return versionsOfNode(db, { nodeId })
  return versionsOfNodeIn(db, { nodeId }, statuses.length ? statuses : ['__none__'])
}

const versionsByIds = preparedList<{}, VersionRow>((db, _p, ids) => db.selectFrom('node_versions').selectAll().where('id', 'in', ids))

export function listVersionsByIds(db: Store, ids: readonly string[]): Promise<VersionRow[]> {
  return versionsByIds(db, {}, ids)
}

/**
 * Archives a source mirrors and serves here: known upstream and fetched on first download (a source mirrored with
 * archives) unless its bytes were refused. With the archives stored here, what "an archive here" means.
 */
const servedMirrorArchives = (db: Store) =>
  db
    .selectFrom('mirror_archives')
    .innerJoin('mirror_sources', 'mirror_sources.id', 'mirror_archives.source_id')
    .select('mirror_archives.version_id')
    .where('mirror_sources.archives', '!=', 'none')
    .where('mirror_archives.problem', '=', '')

/**
 * Which of these versions have an archive here (stored, or served by a mirrored source). One prepared statement for
 * every path that asks (a page of nodes, an install, the change feed). A version in both comes twice (the answer is
 * a set): `union` sorted the two away, a fifth of the statement's time for a page of 30.
 */
const availableArchives = preparedList<{}, { version_id: string }>((db, _p, ids) =>
  db
    .selectFrom('archives')
    .select('version_id')
    .where('version_id', 'in', ids)
    .unionAll(servedMirrorArchives(db).where('mirror_archives.version_id', 'in', ids)),
)

/**
 * A node (by its id, any case) and active versions of it that have an archive here, the newest among them: that one
 * alone when it is the node's latest version (the common case), else all of them.
 */
export interface InstallableNode {
  node: NodeHead
  versions: VersionRow[]
}

type InstallableRow = { n_id: string; n_publisher_id: string; n_status: NodeRow['status'] } & {
  [K in keyof VersionRow]: VersionRow[K] | null
}

/**
 * The rule of availableArchives for the version whose id is in `column` of the row: an archive stored, or one a source
 * mirrors and serves.
 */
export const archiveHereOf =
  <T extends keyof DB>(db: Store, column: StringReference<DB, T>) =>
  (eb: ExpressionBuilder<DB, T>) =>
    eb.or([
      eb.exists(
        db
          .selectFrom('archives')
          .select('archives.version_id')
          .where('archives.version_id', '=', eb.ref(column) as never),
      ),
      eb.exists(servedMirrorArchives(db).where('mirror_archives.version_id', '=', eb.ref(column) as never)),
    ])

const archiveHere = (db: Store) => archiveHereOf<'node_versions'>(db, 'node_versions.id')

const NODE_COLUMNS = ['nodes.id as n_id', 'nodes.publisher_id as n_publisher_id', 'nodes.status as n_status'] as const

/**
 * The common case in two key lookups: the node's latest version (its highest active one, kept on the node row)
 * when it has an archive here, which makes it the newest installable one. No row: ask installableOfNode.
 */
const installableLatest = prepared<{ id: string }, InstallableRow>((db, p) =>
  db
    .selectFrom('nodes')
    .innerJoin('node_versions', 'node_versions.id', 'nodes.latest_version_id')
    .where('nodes.normalized_id', '=', p.id)
    .where('nodes.latest_version_status', '=', 'active')
    .where('node_versions.status', '=', 'active')
    .where(archiveHere(db))
    .selectAll('node_versions')
    .select(NODE_COLUMNS),
)

/** The node and every version it may install (a left join: a node without any is one row). */
const installableOfNode = prepared<{ id: string }, InstallableRow>((db, p) =>
  db
    .selectFrom('nodes')
    .leftJoin('node_versions', (join) =>
      join.onRef('node_versions.node_id', '=', 'nodes.id').on('node_versions.status', '=', 'active').on(archiveHere(db)),
    )
    .selectAll('node_versions')
    .select(NODE_COLUMNS)
    .where('nodes.normalized_id', '=', p.id),
)

export async function findInstallableNode(db: Store, id: string): Promise<InstallableNode | undefined> {
  const params = { id: id.toLowerCase() }
  const [fast] = await installableLatest(db, params)
  const rows = fast ? [fast] : await installableOfNode(db, params)
  const first = rows[0]
  if (!first) return undefined
  // The rows as read, the node's three columns left beside the version's: copying each row without them was 4% of the
  // server's CPU under installs alone.
  const versions = rows.flatMap((row) => (row.id === null ? [] : [row as unknown as VersionRow]))
  return { node: { id: first.n_id, publisher_id: first.n_publisher_id, status: first.n_status }, versions }
}

export async function availableArchiveIds(db: Store, versionIds: readonly string[]): Promise<Set<string>> {
  return new Set((await availableArchives(db, {}, versionIds)).map((r) => r.version_id))
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

/**
 * One page of versions across nodes (or of one node), newest first, with their node's publisher; versions of
 * deleted nodes never, of banned ones on request. `count` says how many there are in all (a caller may keep it).
 * Shaped for large stores: the nodes left out are probed as a set (or counted from their side), never joined per
 * row. Across nodes with active versions among those asked (nearly all of them), the page walks the versions
 * newest first along node_versions_created, which holds each one's status and node: it reads its offset and limit
 * of index entries. Through the status index it sorted every matching version for each page (5 s at the
 * millionth); rare statuses alone (a review queue) still read that index, where they are a short range.
 */
export async function pageVersions(
  db: Store,
  q: { nodeId?: string; statuses: readonly VersionStatus[]; includeBannedNodes: boolean; offset: number; limit: number },
): Promise<{ rows: VersionWithPublisher[]; count: () => Promise<number> }> {
  const statuses = q.statuses.length ? q.statuses : ['__none__' as VersionStatus]
  const shown: NodeRow['status'][] = q.includeBannedNodes ? ['active', 'banned'] : ['active']
  let node: Pick<NodeRow, 'id' | 'status'> | undefined
  if (q.nodeId !== undefined) {
    node = await db.selectFrom('nodes').select(['id', 'status']).where('normalized_id', '=', q.nodeId.toLowerCase()).executeTakeFirst()
    if (!node || !shown.includes(node.status)) return { rows: [], count: async () => 0 }
  }
  const hiddenStatuses: NodeRow['status'][] = q.includeBannedNodes ? ['deleted'] : ['banned', 'deleted']
  const hidden = notActive(db).select('n.id').where('n.status', 'in', hiddenStatuses)
  // `status || ''` is the status, but not a column an index can be chosen by: the order's index is taken instead.
  const newestFirst = !node && statuses.includes('active')
  const ids = await db
    .selectFrom('node_versions')
    .select('id')
    .where(newestFirst ? sql<string>`status || ''` : sql.ref('status'), 'in', statuses)
    .where((eb) => (node ? eb('node_id', '=', node.id) : eb('node_id', 'not in', hidden)))
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .offset(q.offset)
    .limit(q.limit)
    .execute()
  const byId = new Map(
    (
      await listVersionsByIds(
        db,
        ids.map((r) => r.id),
      )
    ).map((v) => [v.id, v]),
  )
  const page = ids.map((r) => byId.get(r.id)!)
  const publishers = new Map(
    (
      await db
        .selectFrom('nodes')
        .select(['id', 'publisher_id'])
        .where('id', 'in', page.length ? [...new Set(page.map((v) => v.node_id))] : [''])
        .execute()
    ).map((n) => [n.id, n.publisher_id]),
  )
  return {
    rows: page.map((v) => ({ ...v, publisher_id: publishers.get(v.node_id)! })),
    count: () => countVersions(db, statuses, hiddenStatuses, node),
  }
}

/** Nodes that are not active, through the partial index of exactly them (its condition must appear as written). */
const notActive = (db: Store) => db.selectFrom('nodes as n').where('n.status', '!=', 'active')

async function countVersions(db: Store, statuses: readonly VersionStatus[], hidden: NodeRow['status'][], node?: Pick<NodeRow, 'id'>) {
  const count = (eb: ExpressionBuilder<DB, 'node_versions'>) => eb.fn.countAll<number>().as('n')
  if (node) {
    const row = await db
      .selectFrom('node_versions')
      .select(count)
      .where('node_id', '=', node.id)
      .where('status', 'in', statuses)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
  const all = await db.selectFrom('node_versions').select(count).where('status', 'in', statuses).executeTakeFirstOrThrow()
  if (!Number(all.n)) return 0
  // Versions of the nodes left out, counted node by node (few nodes are banned or deleted; both lookups are by index).
  const left = await notActive(db)
    .where('n.status', 'in', hidden)
    .select((eb) =>
      eb.fn
        .sum<number | null>(
          eb
            .selectFrom('node_versions as v')
            .whereRef('v.node_id', '=', 'n.id')
            .where('v.status', 'in', statuses)
            .select((e) => e.fn.countAll<number>().as('c')),
        )
        .as('n'),
    )
    .executeTakeFirstOrThrow()
  return Number(all.n) - Number(left.n ?? 0)
}
