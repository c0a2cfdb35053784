/** Answers a NodeQuery with SQL alone: portable LIKE matching, used until (and whenever) no index is ready. */
import { type Expression, type SqlBool, sql } from 'kysely'
import { normalizePlatformValue, OS_INDEPENDENT, repositoryKey } from '../domain/platform'
import type { NodeQuery } from '../domain/node-query'
import { dialectOf, type Store } from './db'

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)
const contains = (s: string) => `%${escapeLike(s.toLowerCase())}%`
// SQLite's LIKE ignores the case of ASCII letters, exactly as far as its lower() folds them, so the column is
// compared as stored: lower() on every row doubled the cost of the scans this fallback makes while the index
// warms. PostgreSQL's LIKE minds case: ILIKE is its spelling of the same comparison.
const caseless = (db: Store) => (dialectOf(db) === 'postgres' ? sql.raw('ilike') : sql.raw('like'))
const like = (db: Store, column: string, pattern: string): Expression<SqlBool> =>
  sql<SqlBool>`${sql.ref(column)} ${caseless(db)} ${pattern} escape '\\'`

function platformMatch(column: string, filter: string, osIndependent: boolean): Expression<SqlBool> {
  const key = escapeLike(normalizePlatformValue(filter))
  const independent = osIndependent ? sql`or ${sql.ref(column)} like ${`%|${OS_INDEPENDENT}|%`}` : sql``
  return sql<SqlBool>`(${sql.ref(column)} = '' ${independent}
    or ${sql.ref(column)} like ${`%|${key}|%`} escape '\\'
    or ${sql.ref(column)} like ${`%|${key} :: %`} escape '\\')`
}

/** The nodes alone: a filter reads their own columns only. */
const nodesAlone = (db: Store) => db.selectFrom('nodes')

/**
 * The nodes walked in the list order's index (ranking, downloads, id), which the nodes' narrow rows of counts hold
 * (schema 17: every node has one): SQLite keeps a CROSS JOIN's order, so the page stops at its limit instead of
 * sorting every node (the planner, left to itself, sorted).
 */
const inListOrder = (db: Store) =>
  db.selectFrom('node_downloads').crossJoin('nodes').whereRef('nodes.id', '=', 'node_downloads.node_id') as unknown as ReturnType<
    typeof nodesAlone
  >

/**
 * A matched node's count, looked up for the order: joined instead, SQLite evaluated a keyword's LIKE scan of every
 * node's texts a second time after the join (112 ms a page at 100,000 nodes against 77).
 */
const countOf = sql<number>`coalesce((select node_downloads.downloads from node_downloads
  where node_downloads.node_id = nodes.id), 0)`

function filtered(db: Store, q: NodeQuery, from: ReturnType<typeof nodesAlone>) {
  let query = from.where('nodes.status', 'in', q.includeBanned ? ['active', 'banned'] : ['active'])
  if (q.search) {
    const p = contains(q.search)
    // The texts' narrow rows are scanned, not the nodes' (store/search-texts.ts), and the publishers matching are
    // found once, not joined to every node: a lookup per node was half of a scan.
    query = query.where((eb) =>
      eb.or([
        eb(
          'nodes.id',
          'in',
          eb
            .selectFrom('node_search_keywords')
            .select('node_search_keywords.node_id')
            .where(like(db, 'node_search_keywords.text', p)),
        ),
        eb(
          'nodes.publisher_id',
          'in',
          eb
            .selectFrom('publishers')
            .select('publishers.id')
            .where((pb) => pb.or([like(db, 'publishers.id', p), like(db, 'publishers.name', p)])),
        ),
      ]),
    )
  }
  if (q.repositoryUrl) query = query.where(like(db, 'nodes.repository_key', contains(repositoryKey(q.repositoryUrl))))
  if (q.hostNode) {
    const p = contains(q.hostNode)
    // A row a node (its latest version's names), not one a name of every version's (7.5 a node in the benchmark store).
    query = query.where('nodes.latest_version_status', '=', 'active').where('nodes.id', 'in', (eb) =>
      eb
        .selectFrom('node_search_host_names')
        .select('node_search_host_names.node_id')
        .where(like(db, 'node_search_host_names.names', p)),
    )
  }
  if (q.os) query = query.where(platformMatch('nodes.os_keys', q.os, true))
  if (q.accelerator) query = query.where(platformMatch('nodes.accelerator_keys', q.accelerator, false))
  if (q.nodeIds) query = query.where('nodes.normalized_id', 'in', q.nodeIds.length ? q.nodeIds.map((id) => id.toLowerCase()) : [''])
  if (q.changedSince) query = query.where('nodes.updated_at', '>', q.changedSince)
  return query
}

export async function queryNodeIds(db: Store, q: NodeQuery): Promise<{ ids: string[]; total: number }> {
  const ordered = !q.search && !q.hostNode && !q.repositoryUrl
  const base = filtered(db, q, ordered ? inListOrder(db) : nodesAlone(db))
  const count = async () =>
    Number(
      (
        await filtered(db, q, nodesAlone(db))
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  let page = base.select('nodes.id')
  if (q.search) {
    page = page.orderBy(sql`case when nodes.normalized_id = ${q.search.toLowerCase()} then 0 else 1 end`)
  }
  page = (
    ordered
      ? page
          .orderBy(sql`node_downloads.search_ranking`, 'desc')
          .orderBy(sql`node_downloads.downloads`, 'desc')
          .orderBy(sql`node_downloads.node_id`)
      : page.orderBy('nodes.search_ranking', 'desc').orderBy(countOf, 'desc').orderBy('nodes.id')
  )
    .offset(q.offset)
    .limit(q.limit)
  if (ordered) {
    // The list order is an index: the page stops early, and the count reads an index too.
    const [rows, total] = await Promise.all([page.execute(), count()])
    return { ids: rows.map((r) => r.id), total }
  }
  // A keyword or a substring filter scans every row (or every host node name) once: the total comes with the page,
  // not from a second scan.
  const rows = await page.select(sql<number>`count(*) over ()`.as('total')).execute()
  const total = rows.length ? Number(rows[0]!.total) : q.offset > 0 ? await count() : 0
  return { ids: rows.map((r) => r.id), total }
}

/** The best-ranked visible node whose latest active version provides the host node (ignoring case). */
export async function findHostNodeOwner(db: Store, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('host_nodes')
    .innerJoin('nodes', 'nodes.latest_version_id', 'host_nodes.version_id')
    .innerJoin('node_downloads', 'node_downloads.node_id', 'nodes.id')
    .select('nodes.id')
    .where('nodes.latest_version_status', '=', 'active')
    .where('nodes.status', '!=', 'deleted')
    .where(sql<SqlBool>`lower(host_nodes.name) = ${name.toLowerCase()}`)
    .orderBy('node_downloads.search_ranking', 'desc')
    .orderBy('node_downloads.downloads', 'desc')
    .orderBy('nodes.id')
    .executeTakeFirst()
  return row?.id
}
