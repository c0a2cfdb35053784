/** Nodes: lookups, the columns a publish writes, counters. */
import { platformKeys, repositoryKey } from '../domain/platform'
import type { Store } from './db'
import type { Updateable } from 'kysely'
import type { NodeRow, NodeTable, VersionRow } from './schema'

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

/** Case-insensitive: node ids are unique ignoring case. */
export function findNode(db: Store, id: string): Promise<NodeRow | undefined> {
  return db.selectFrom('nodes').selectAll().where('normalized_id', '=', id.toLowerCase()).executeTakeFirst()
}

export function listNodesByIds(db: Store, ids: readonly string[]): Promise<NodeRow[]> {
  if (!ids.length) return Promise.resolve([])
  return db.selectFrom('nodes').selectAll().where('id', 'in', ids).execute()
}

export function listNodesOfPublisher(
  db: Store,
  publisherId: string,
  opts: { includeBanned: boolean; offset: number; limit: number },
): Promise<NodeRow[]> {
  const statuses: NodeRow['status'][] = opts.includeBanned ? ['active', 'banned'] : ['active']
  return db
    .selectFrom('nodes')
    .selectAll()
    .where('publisher_id', '=', publisherId)
    .where('status', 'in', statuses)
    .orderBy('id')
    .offset(opts.offset)
    .limit(opts.limit)
    .execute()
}

export async function insertNode(db: Store, node: { id: string; publisherId: string; fields: NodeFields; now: string }): Promise<void> {
  await db
    .insertInto('nodes')
    .values({
      ...nodeFieldsToColumns(node.fields),
      id: node.id,
      normalized_id: node.id.toLowerCase(),
      publisher_id: node.publisherId,
      name: node.fields.name || node.id,
      created_at: node.now,
      updated_at: node.now,
    })
    .execute()
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

/** Adds `count` downloads to a node; its new total, or undefined when the node is gone. */
export async function addDownloads(db: Store, nodeId: string, count: number): Promise<number | undefined> {
  const row = await db
    .updateTable('nodes')
    .set((eb) => ({ downloads: eb('downloads', '+', count) }))
    .where('id', '=', nodeId)
    .returning('downloads')
    .executeTakeFirst()
  return row?.downloads
}
