/**
 * Writing a batch of download counts: the nodes' totals and their feed entries, in one transaction. The server runs
 * it in a thread of its own on a SQLite file (download-writer.ts), elsewhere on the store's own handle.
 */
import { appendChanges } from './changes'
import type { Store } from './db'
import { preparedList } from './prepared'

/** What a batch wrote: each node's new total (unknown ids are left out), and the feed serials its nodes were given. */
export interface CountsWritten {
  totals: Map<string, number>
  serials?: { first: number; last: number }
}

/** Adds `count` downloads to nodes; their new totals. */
const addToNodes = preparedList<{ count: number }, { id: string; downloads: number }>((db, p, ids) =>
  db
    .updateTable('nodes')
    .set((eb) => ({ downloads: eb('downloads', '+', p.count as unknown as number) }))
    .where('id', 'in', ids)
    .returning(['id', 'downloads']),
)

/**
 * Adds the downloads, one statement per distinct count (most nodes of a batch have one or two), and feeds each
 * counted node as changed, in one transaction. Its first statement writes, so on SQLite it waits for the write lock
 * rather than failing on a snapshot another connection's commit made stale.
 */
export function writeDownloadCounts(db: Store, counts: ReadonlyMap<string, number>, now: string): Promise<CountsWritten> {
  const byCount = new Map<number, string[]>()
  for (const [id, n] of counts) {
    const ids = byCount.get(n)
    if (ids) ids.push(id)
    else byCount.set(n, [id])
  }
  return db.transaction().execute(async (trx) => {
    const totals = new Map<string, number>()
    for (const [count, ids] of byCount) for (const row of await addToNodes(trx, { count }, ids)) totals.set(row.id, row.downloads)
    const serials = await appendChanges(
      trx,
      [...totals.keys()].map((id) => ({ kind: 'node' as const, id })),
      now,
    )
    return { totals, serials }
  })
}
