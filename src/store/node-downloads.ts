/**
 * Each node's narrow row of download counts (schema 17): written when the node is, with the count and the copy of its
 * search_ranking that the list order's index holds. Counts themselves are added by store/download-counts.ts.
 */
import type { Insertable } from 'kysely'
import { insertRows } from './bulk'
import type { Store } from './db'
import type { NodeDownloadsTable } from './schema'

export type NodeCounts = Pick<Insertable<NodeDownloadsTable>, 'node_id' | 'search_ranking' | 'downloads'>

/** The narrow rows of new nodes (their count and ranking as given, 0 when not). */
export async function insertNodeCounts(db: Store, rows: readonly NodeCounts[]): Promise<void> {
  await insertRows(
    db,
    'node_downloads',
    rows.map((r) => ({ node_id: r.node_id, search_ranking: r.search_ranking ?? 0, downloads: r.downloads ?? 0 })),
  )
}

/** Keeps the narrow row's copy of the node's search_ranking (the list order) in step with the node's. */
export async function setCountedRanking(db: Store, nodeId: string, searchRanking: number): Promise<void> {
  await setNodeCounts(db, nodeId, { search_ranking: searchRanking })
}

/** Sets a node's count or its ranking's copy, as a fixture or a mirror gives them (absent ones are left). */
export async function setNodeCounts(db: Store, nodeId: string, set: { search_ranking?: number; downloads?: number }): Promise<void> {
  const values = Object.fromEntries(
    (['search_ranking', 'downloads'] as const).filter((key) => set[key] !== undefined).map((key) => [key, set[key]]),
  )
  if (Object.keys(values).length) await db.updateTable('node_downloads').set(values).where('node_id', '=', nodeId).execute()
}

/**
 * A mirrored node's count and ranking as the upstream has them: its narrow row written whole (a node the mirror just
 * inserted has none yet). The feed entry is its node change's, made by the mirror's write.
 */
export async function writeNodeCounts(db: Store, rows: readonly Required<NodeCounts>[]): Promise<void> {
  for (const r of rows)
    await db
      .insertInto('node_downloads')
      .values(r)
      .onConflict((oc) => oc.column('node_id').doUpdateSet({ search_ranking: r.search_ranking, downloads: r.downloads }))
      .execute()
}
