/** Reads and writes of many rows at once (a fixture, and later other bulk loads): lookups by key lists, chunked inserts. */
import type { Insertable } from 'kysely'
import type { Store } from './db'
import { selectNodes } from './nodes'
import type { DB } from './schema'

/** Keys per `in (...)` list, and bound values per statement: well under SQLite's limit of 32,766. */
const KEYS_PER_QUERY = 500
const VALUES_PER_STATEMENT = 30_000

async function inChunks<K, R>(keys: readonly K[], read: (chunk: K[]) => Promise<R[]>, size = KEYS_PER_QUERY): Promise<R[]> {
  const out: R[] = []
  for (let i = 0; i < keys.length; i += size) out.push(...(await read(keys.slice(i, i + size))))
  return out
}

/**
 * Inserts rows in as few statements as the bound-value limit allows. Rows are grouped by their set of columns:
 * SQLite has no DEFAULT inside VALUES, so every row of one statement must name the same columns.
 */
export async function insertRows<T extends keyof DB & string>(db: Store, table: T, rows: readonly Insertable<DB[T]>[]): Promise<void> {
  const groups = new Map<string, Insertable<DB[T]>[]>()
  for (const row of rows) {
    const key = Object.keys(row as object).join(',')
    const group = groups.get(key)
    if (group) group.push(row)
    else groups.set(key, [row])
  }
  for (const [key, group] of groups) {
    const per = Math.max(1, Math.floor(VALUES_PER_STATEMENT / Math.max(1, key.split(',').length)))
    for (let i = 0; i < group.length; i += per) {
      await db
        .insertInto(table)
        .values(group.slice(i, i + per) as never)
        .execute()
    }
  }
}

/** Sets columns of one row of a table keyed by `id`. */
export async function updateById(
  db: Store,
  table: 'users' | 'publishers' | 'nodes' | 'node_versions',
  id: string,
  changes: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable(table)
    .set(changes as never)
    .where('id', '=', id)
    .execute()
}

export const usersByIds = (db: Store, ids: readonly string[]) =>
  inChunks(ids, (chunk) => db.selectFrom('users').selectAll().where('id', 'in', chunk).execute())

export const accessTokensByHashes = (db: Store, hashes: readonly string[]) =>
  inChunks(hashes, (chunk) => db.selectFrom('access_tokens').select(['token_hash', 'user_id']).where('token_hash', 'in', chunk).execute())

export const publishersByIds = (db: Store, ids: readonly string[]) =>
  inChunks(ids, (chunk) => db.selectFrom('publishers').selectAll().where('id', 'in', chunk).execute())

export const membersOfPublishers = (db: Store, publisherIds: readonly string[]) =>
  inChunks(publisherIds, (chunk) => db.selectFrom('publisher_members').selectAll().where('publisher_id', 'in', chunk).execute())

export const membershipsOfUsers = (db: Store, userIds: readonly string[]) =>
  inChunks(userIds, (chunk) =>
    db.selectFrom('publisher_members').select(['publisher_id', 'user_id']).where('user_id', 'in', chunk).execute(),
  )

export const publisherTokensByHashes = (db: Store, hashes: readonly string[]) =>
  inChunks(hashes, (chunk) =>
    db.selectFrom('publisher_tokens').select(['token_hash', 'publisher_id']).where('token_hash', 'in', chunk).execute(),
  )

/** Nodes by their lower-cased ids (node ids are unique ignoring case). */
export const nodesByNormalizedIds = (db: Store, normalizedIds: readonly string[]) =>
  inChunks(normalizedIds, (chunk) => selectNodes(db).where('nodes.normalized_id', 'in', chunk).execute())

export const versionsOfNodes = (db: Store, nodeIds: readonly string[]) =>
  inChunks(nodeIds, (chunk) => db.selectFrom('node_versions').selectAll().where('node_id', 'in', chunk).execute())

/**
 * Versions by their key (node_id, version): each pair a lookup in the unique index, 100 pairs to a statement (an `or`
 * of them: SQLite scans the table for a row-value `in` list, and limits an expression's depth to 1,000).
 */
export const versionsByKeys = (db: Store, keys: readonly { nodeId: string; version: string }[]) =>
  inChunks(
    keys,
    (chunk) =>
      db
        .selectFrom('node_versions')
        .selectAll()
        .where((eb) => eb.or(chunk.map((k) => eb.and([eb('node_id', '=', k.nodeId), eb('version', '=', k.version)]))))
        .execute(),
    100,
  )

export const versionIdsTaken = (db: Store, ids: readonly string[]) =>
  inChunks(ids, (chunk) => db.selectFrom('node_versions').select(['id', 'node_id', 'version']).where('id', 'in', chunk).execute())

export const archivesOfVersions = (db: Store, versionIds: readonly string[]) =>
  inChunks(versionIds, (chunk) => db.selectFrom('archives').selectAll().where('version_id', 'in', chunk).execute())

export const hostNodesOfVersions = (db: Store, versionIds: readonly string[]) =>
  inChunks(versionIds, (chunk) => db.selectFrom('host_nodes').selectAll().where('version_id', 'in', chunk).execute())

export async function deleteHostNodes(db: Store, versionId: string): Promise<void> {
  await db.deleteFrom('host_nodes').where('version_id', '=', versionId).execute()
}
