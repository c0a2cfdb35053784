/** Reads what the search index holds for each node: searched text, filter values and ordering keys. */
import type { Store } from './db'

export interface SearchDoc {
  id: string
  status: 'active' | 'banned' | 'deleted'
  name: string
  description: string
  author: string
  tags: string[]
  publisherId: string
  publisherName: string
  repositoryKey: string
  osKeys: string
  acceleratorKeys: string
  searchRanking: number
  downloads: number
  updatedAt: string
  /** Host node names of the latest version, when it is active. */
  hostNodes: string[]
}

function nodeRows(db: Store) {
  return db
    .selectFrom('nodes')
    .innerJoin('publishers', 'publishers.id', 'nodes.publisher_id')
    .select([
      'nodes.id', 'nodes.status', 'nodes.name', 'nodes.description', 'nodes.author', 'nodes.tags_json',
      'nodes.publisher_id', 'publishers.name as publisher_name', 'nodes.repository_key', 'nodes.os_keys',
      'nodes.accelerator_keys', 'nodes.search_ranking', 'nodes.downloads', 'nodes.updated_at', 'nodes.latest_version_id',
    ])
}
type NodeDocRow = Awaited<ReturnType<ReturnType<typeof nodeRows>['execute']>>[number]

async function withHostNodes(db: Store, rows: NodeDocRow[]): Promise<SearchDoc[]> {
  const latest = rows.flatMap((r) => (r.latest_version_id ? [r.latest_version_id] : []))
  const names = new Map<string, string[]>()
  for (let i = 0; i < latest.length; i += 500) {
    const hostRows = await db
      .selectFrom('host_nodes')
      .innerJoin('node_versions', 'node_versions.id', 'host_nodes.version_id')
      .select(['host_nodes.version_id', 'host_nodes.name'])
      .where('host_nodes.version_id', 'in', latest.slice(i, i + 500))
      .where('node_versions.status', '=', 'active')
      .execute()
    for (const h of hostRows) names.set(h.version_id, [...(names.get(h.version_id) ?? []), h.name])
  }
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    name: r.name,
    description: r.description,
    author: r.author,
    tags: JSON.parse(r.tags_json) as string[],
    publisherId: r.publisher_id,
    publisherName: r.publisher_name,
    repositoryKey: r.repository_key,
    osKeys: r.os_keys,
    acceleratorKeys: r.accelerator_keys,
    searchRanking: r.search_ranking,
    downloads: r.downloads,
    updatedAt: r.updated_at,
    hostNodes: (r.latest_version_id && names.get(r.latest_version_id)) || [],
  }))
}

/** One batch of documents in id order, after `afterId`, for loading the whole index in steps. */
export async function loadSearchDocBatch(db: Store, afterId: string | undefined, limit: number): Promise<SearchDoc[]> {
  let q = nodeRows(db).orderBy('nodes.id').limit(limit)
  if (afterId !== undefined) q = q.where('nodes.id', '>', afterId)
  return withHostNodes(db, await q.execute())
}

/** Documents of the given nodes (deleted ones included, so the index can drop them). */
export async function loadSearchDocs(db: Store, ids: readonly string[]): Promise<SearchDoc[]> {
  if (!ids.length) return []
  return withHostNodes(db, await nodeRows(db).where('nodes.id', 'in', ids).execute())
}

export async function loadSearchDocsOfPublishers(db: Store, publisherIds: readonly string[]): Promise<SearchDoc[]> {
  if (!publisherIds.length) return []
  return withHostNodes(db, await nodeRows(db).where('nodes.publisher_id', 'in', publisherIds).execute())
}

export async function countIndexableNodes(db: Store): Promise<number> {
  const row = await db
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '!=', 'deleted')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
