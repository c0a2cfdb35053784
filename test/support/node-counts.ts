/** Whether every node has its narrow row of counts (schema 17), holding the node's own search_ranking. */
import type { Store } from '../../src/store/db'

/** Nodes whose narrow row is missing, or whose copy of the ranking is not the node's: [id, ranking, copy]. */
export async function strayCounts(db: Store): Promise<[string, number, number | null][]> {
  const rows = await db
    .selectFrom('nodes')
    .leftJoin('node_downloads', 'node_downloads.node_id', 'nodes.id')
    .select(['nodes.id', 'nodes.search_ranking', 'node_downloads.search_ranking as copy'])
    .orderBy('nodes.id')
    .execute()
  return rows.filter((r) => r.copy === null || Number(r.copy) !== Number(r.search_ranking)).map((r) => [r.id, r.search_ranking, r.copy])
}
