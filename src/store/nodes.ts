/** Nodes: lookups, the columns a publish writes, counters. */
import { platformKeys, repositoryKey } from '../domain/platform'
import { sql } from 'kysely'
import { breathe } from './bulk'
import type { Store } from './db'
import { insertNodeCounts, setCountedRanking } from './node-downloads'
import { prepared, preparedList } from './prepared'
import type { Expression, ExpressionBuilder, SqlBool, Updateable } from 'kysely'
import type { DB, NodeRow, NodeTable, VersionRow } from './schema'

/** Node metadata a publisher may set; absent fields are left as they are. */
export interface NodeFields {
  name?: string
  description?: string
  author?: string
  license?: string
  icon?: string
  banner_url?: string
  repository?: string
  category?: string
  tags?: string[]
  supported_os?: string[]
  supported_accelerators?: string[]
  supported_hostui_version?: string
  supported_hostui_frontend_version?: string
  preempted_host_node_names?: string[]
  translations?: Record<string, unknown>
}

export type NodeColumns = Omit<Updateable<NodeTable>, 'id' | 'normalized_id' | 'publisher_id' | 'created_at'>

/** The columns of the fields that are set (absent fields are left out). */
export function nodeFieldsToColumns(f: NodeFields): NodeColumns {
  const cols: NodeColumns = {}
  const text = ['name', 'description', 'author', 'license', 'icon', 'banner_url', 'category'] as const
  for (const key of text) if (f[key] !== undefined) cols[key] = f[key]
  if (f.repository !== undefined) {
    cols.repository = f.repository
    cols.repository_key = repositoryKey(f.repository)
  }
  if (f.tags !== undefined) cols.tags_json = JSON.stringify(f.tags)
  if (f.supported_os !== undefined) {
    cols.supported_os_json = JSON.stringify(f.supported_os)
    cols.os_keys = platformKeys(f.supported_os)
  }
  if (f.supported_accelerators !== undefined) {
    cols.supported_accelerators_json = JSON.stringify(f.supported_accelerators)
    cols.accelerator_keys = platformKeys(f.supported_accelerators)
  }
  if (f.supported_hostui_version !== undefined) cols.supported_hostui_version = f.supported_hostui_version
  if (f.supported_hostui_frontend_version !== undefined) {
    cols.supported_hostui_frontend_version = f.supported_hostui_frontend_version
  }
  if (f.preempted_host_node_names !== undefined) {
    cols.preempted_host_node_names_json = JSON.stringify(f.preempted_host_node_names)
  }
  if (f.translations !== undefined) cols.translations_json = JSON.stringify(f.translations)
  return cols
}

/**
 * Nodes as read: their rows with their download counts, which live in narrow rows of their own (node_downloads, which
 * a count rewrites instead of the node's). A node without its narrow row reads 0.
 */
export const selectNodes = (db: Store) =>
  db
    .selectFrom('nodes')
    .leftJoin('node_downloads', 'node_downloads.node_id', 'nodes.id')
    .selectAll('nodes')
    .select(sql<number>`coalesce(node_downloads.downloads, 0)`.as('downloads'))

const nodeByNormalizedId = prepared<{ id: string }, NodeRow>((db, p) => selectNodes(db).where('nodes.normalized_id', '=', p.id))

/** Case-insensitive: node ids are unique ignoring case. */
export async function findNode(db: Store, id: string): Promise<NodeRow | undefined> {
  return (await nodeByNormalizedId(db, { id: id.toLowerCase() }))[0]
}

/** What a read that renders nothing of the node's own row needs of it: the id as stored, its publisher, its status. */
export type NodeHead = Pick<NodeRow, 'id' | 'publisher_id' | 'status'>

const nodeHeadByNormalizedId = prepared<{ id: string }, NodeHead>((db, p) =>
  db.selectFrom('nodes').select(['id', 'publisher_id', 'status']).where('normalized_id', '=', p.id),
)

/**
 * A node's head, case-insensitively: three columns, no count. The whole row and its count, as findNode reads them,
 * cost a node read at 100,000 nodes twice as much in a loop (28-39 µs against 13-14).
 */
export async function findNodeHead(db: Store, id: string): Promise<NodeHead | undefined> {
  return (await nodeHeadByNormalizedId(db, { id: id.toLowerCase() }))[0]
}

const nodesByIds = preparedList<{}, NodeRow>((db, _p, ids) => selectNodes(db).where('nodes.id', 'in', ids))

export function listNodesByIds(db: Store, ids: readonly string[]): Promise<NodeRow[]> {
  return nodesByIds(db, {}, ids)
}

const countsByIds = preparedList<{}, { id: string; downloads: number }>((db, _p, ids) =>
  db.selectFrom('node_downloads').select(['node_id as id', 'downloads']).where('node_id', 'in', ids),
)

/** The download counts of these nodes, as stored. */
export async function readDownloads(db: Store, ids: readonly string[]): Promise<Map<string, number>> {
  return new Map((await countsByIds(db, {}, ids)).map((r) => [r.id, r.downloads]))
}

export function listNodesOfPublisher(
  db: Store,
  publisherId: string,
  opts: { includeBanned: boolean; offset: number; limit: number },
): Promise<NodeRow[]> {
  const statuses: NodeRow['status'][] = opts.includeBanned ? ['active', 'banned'] : ['active']
  return selectNodes(db)
    .where('nodes.publisher_id', '=', publisherId)
    .where('nodes.status', 'in', statuses)
    .orderBy('nodes.id')
    .offset(opts.offset)
    .limit(opts.limit)
    .execute()
}

type NewNode = { id: string; publisherId: string; fields: NodeFields; now: string }

const newNodeRow = (node: NewNode) => ({
  ...nodeFieldsToColumns(node.fields),
  id: node.id,
  normalized_id: node.id.toLowerCase(),
  publisher_id: node.publisherId,
  name: node.fields.name || node.id,
  created_at: node.now,
  updated_at: node.now,
})

export async function insertNode(db: Store, node: NewNode): Promise<void> {
  await db.insertInto('nodes').values(newNodeRow(node)).execute()
  await insertNodeCounts(db, [{ node_id: node.id }])
}

/**
 * Inserts the node unless its id is taken, also ignoring case; whether it did. On PostgreSQL a node another
 * transaction is inserting is waited for: once that one commits this inserts nothing, and the next statement reads it.
 */
export async function insertNodeUnlessTaken(db: Store, node: NewNode): Promise<boolean> {
  const rows = await db
    .insertInto('nodes')
    .values(newNodeRow(node))
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .execute()
  if (rows.length) await insertNodeCounts(db, [{ node_id: node.id }])
  return rows.length > 0
}

export async function updateNodeFields(db: Store, id: string, fields: NodeFields, now: string) {
  const cols = nodeFieldsToColumns(fields)
  if (cols.name === '') delete cols.name
  await db
    .updateTable('nodes')
    .set({ ...cols, updated_at: now })
    .where('id', '=', id)
    .execute()
}

export async function setLatestVersion(db: Store, nodeId: string, latest: Pick<VersionRow, 'id' | 'status'> | undefined, now: string) {
  await db
    .updateTable('nodes')
    .set({ latest_version_id: latest?.id ?? null, latest_version_status: latest?.status ?? null, updated_at: now })
    .where('id', '=', nodeId)
    .execute()
}

type NodeStatus = NodeRow['status']

/** One page of a publisher's node ids in id order, and how many there are in all. */
export async function pageNodeIdsOfPublisher(
  db: Store,
  publisherId: string,
  opts: { includeBanned: boolean; offset: number; limit: number },
): Promise<{ ids: string[]; total: number }> {
  const statuses: NodeStatus[] = opts.includeBanned ? ['active', 'banned'] : ['active']
  const base = db.selectFrom('nodes').where('publisher_id', '=', publisherId).where('status', 'in', statuses)
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.select('id').orderBy('id').offset(opts.offset).limit(opts.limit).execute(),
  ])
  return { ids: rows.map((r) => r.id), total: Number(count.n) }
}

/** Nodes of the publisher that are not deleted. */
export async function countLiveNodesOfPublisher(db: Store, publisherId: string): Promise<number> {
  const row = await db
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('publisher_id', '=', publisherId)
    .where('status', '!=', 'deleted')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Sets the node's status when it is in one of `from` (a node banned with its publisher counts as 'banned'
 * and may be re-banned on its own); false when nothing changed. A status set here is the node's own, never
 * one its publisher's ban made.
 */
export async function setNodeStatus(
  db: Store,
  id: string,
  change: { from: NodeStatus[]; to: NodeStatus; alsoIfBannedWithPublisher?: boolean },
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('nodes')
    .set({ status: change.to, banned_with_publisher: 0, updated_at: now })
    .where('id', '=', id)
    .where((eb) => {
      const inFrom = eb('status', 'in', change.from)
      return change.alsoIfBannedWithPublisher ? eb.or([inFrom, eb('banned_with_publisher', '=', 1)]) : inFrom
    })
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Bans the publisher's active nodes, marking them as banned with it; returns their ids. */
export function banNodesWithPublisher(db: Store, publisherId: string, now: string): Promise<string[]> {
  return updateInSteps(db, (eb) => eb.and([eb('publisher_id', '=', publisherId), eb('status', '=', 'active')]), {
    status: 'banned',
    banned_with_publisher: 1,
    updated_at: now,
  })
}

/** Makes active again exactly the nodes its publisher's ban made banned; returns their ids. */
export function restoreNodesBannedWithPublisher(db: Store, publisherId: string, now: string): Promise<string[]> {
  return updateInSteps(
    db,
    (eb) => eb.and([eb('publisher_id', '=', publisherId), eb('status', '=', 'banned'), eb('banned_with_publisher', '=', 1)]),
    { status: 'active', banned_with_publisher: 0, updated_at: now },
  )
}

/** Nodes a publisher's ban changes in one statement: its 20,000 nodes in one held the event loop 0.5-0.6 s. */
const NODES_PER_STEP = 500

/**
 * Sets `values` on the nodes `which` picks, NODES_PER_STEP ids at a time, breathing between steps; each step's
 * update states `which` again (a node moved or changed since the ids were read is left alone). Their ids, in order.
 */
async function updateInSteps(
  db: Store,
  which: (eb: ExpressionBuilder<DB, 'nodes'>) => Expression<SqlBool>,
  values: Updateable<NodeTable>,
): Promise<string[]> {
  const ids = (await db.selectFrom('nodes').select('id').where(which).orderBy('id').execute()).map((r) => r.id)
  const changed: string[] = []
  for (let i = 0; i < ids.length; i += NODES_PER_STEP) {
    if (i) await breathe()
    const step = ids.slice(i, i + NODES_PER_STEP)
    const rows = await db.updateTable('nodes').set(values).where('id', 'in', step).where(which).returning('id').execute()
    for (const row of rows) changed.push(row.id)
  }
  return changed.sort()
}

/**
 * Moves a node to another publisher if it still belongs to `from` and is in one of `statuses`: false when
 * another write got there first (the update is the arbiter between concurrent claims, on every dialect).
 */
export async function moveNode(
  db: Store,
  id: string,
  move: { from: string; to: string; statuses: NodeStatus[] },
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('nodes')
    .set({ publisher_id: move.to, banned_with_publisher: 0, updated_at: now })
    .where('id', '=', id)
    .where('publisher_id', '=', move.from)
    .where('status', 'in', move.statuses)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Fields only admins set: the ranking of search results and the admin tags. */
export async function updateAdminNodeFields(
  db: Store,
  id: string,
  fields: { search_ranking?: number; tags_admin?: string[] },
  now: string,
) {
  const cols: NodeColumns = {}
  if (fields.search_ranking !== undefined) cols.search_ranking = fields.search_ranking
  if (fields.tags_admin !== undefined) cols.tags_admin_json = JSON.stringify(fields.tags_admin)
  if (!Object.keys(cols).length) return
  await db
    .updateTable('nodes')
    .set({ ...cols, updated_at: now })
    .where('id', '=', id)
    .execute()
  if (fields.search_ranking !== undefined) await setCountedRanking(db, id, fields.search_ranking)
}
