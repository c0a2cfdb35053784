/** Reads what the search index holds for each node: searched text, filter values and ordering keys. */
import { sql } from 'kysely'
import { joinedText, type Store } from './db'

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

function docQuery(db: Store) {
  return db
    .selectFrom('nodes')
    .innerJoin('publishers', 'publishers.id', 'nodes.publisher_id')
    .leftJoin('node_downloads', 'node_downloads.node_id', 'nodes.id')
    .select([
      'nodes.id',
      'nodes.status',
      'nodes.name',
      'nodes.description',
      'nodes.author',
      'nodes.tags_json',
      'nodes.publisher_id',
      'publishers.name as publisher_name',
      'nodes.repository_key',
      'nodes.os_keys',
      'nodes.accelerator_keys',
      'nodes.search_ranking',
      sql<number>`coalesce(node_downloads.downloads, 0)`.as('downloads'),
      'nodes.updated_at',
      // One indexed lookup per node; names never contain a newline (they are Python string keys on one line).
      sql<string | null>`case when nodes.latest_version_status = 'active' then
        (select ${joinedText(db, 'name', '\n')} from host_nodes where host_nodes.version_id = nodes.latest_version_id) end`.as(
        'host_names',
      ),
    ])
}

async function docs(query: ReturnType<typeof docQuery>): Promise<SearchDoc[]> {
  return (await query.execute()).map((r) => ({
    id: r.id,
    status: r.status,
    name: r.name,
    description: r.description,
    author: r.author,
    tags: r.tags_json === '[]' ? [] : (JSON.parse(r.tags_json) as string[]),
    publisherId: r.publisher_id,
    publisherName: r.publisher_name,
    repositoryKey: r.repository_key,
    osKeys: r.os_keys,
    acceleratorKeys: r.accelerator_keys,
    searchRanking: r.search_ranking,
    downloads: r.downloads,
    updatedAt: r.updated_at,
    hostNodes: r.host_names ? r.host_names.split('\n') : [],
  }))
}

/** One batch of documents in id order, after `afterId`, for loading the whole index (or one publisher's part) in steps. */
export function loadSearchDocBatch(db: Store, afterId: string | undefined, limit: number, publisherId?: string): Promise<SearchDoc[]> {
  let q = docQuery(db).orderBy('nodes.id').limit(limit)
  if (afterId !== undefined) q = q.where('nodes.id', '>', afterId)
  if (publisherId !== undefined) q = q.where('nodes.publisher_id', '=', publisherId)
  return docs(q)
}

/** Documents of the given nodes (deleted ones included, so the index can drop them). */
export function loadSearchDocs(db: Store, ids: readonly string[]): Promise<SearchDoc[]> {
  return ids.length ? docs(docQuery(db).where('nodes.id', 'in', ids)) : Promise.resolve([])
}

/**
 * All nodes less the deleted ones: both counts read an index (the deleted ones the partial index of nodes not
 * active, which the redundant `status != 'active'` lets SQLite use); counting `status != 'deleted'` read every
 * row, 60 ms at 100,000 nodes on each readiness probe.
 */
export async function countIndexableNodes(db: Store): Promise<number> {
  const count = (q: ReturnType<typeof countQuery>) => q.executeTakeFirstOrThrow().then((r) => Number(r.n))
  const [all, deleted] = await Promise.all([
    count(countQuery(db)),
    count(countQuery(db).where('status', '!=', 'active').where('status', '=', 'deleted')),
  ])
  return all - deleted
}

const countQuery = (db: Store) => db.selectFrom('nodes').select((eb) => eb.fn.countAll<number>().as('n'))
