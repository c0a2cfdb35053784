/**
 * Writing a batch of download counts: the nodes' narrow rows (schema 17), with the serials that feed them, in one
 * transaction. The server runs it in a thread of its own on a SQLite file (download-writer.ts), elsewhere on the
 * store's own handle. Neither the node's wide row nor its `changes` row is touched: a count is fed from its narrow
 * row (store/changes.ts `listChanges`).
 */
import { sql } from 'kysely'
import { reserveSerials } from './changes'
import type { Store } from './db'

/** What a batch wrote: each node's new total (unknown ids are left out), and the feed serials its nodes were given. */
export interface CountsWritten {
  totals: Map<string, number>
  serials?: { first: number; last: number }
}

/** Rows per statement: three bound values each, well within SQLite's 32,766 and PostgreSQL's 65,535. */
const ROWS_PER_STATEMENT = 1000

/** Adds each node's count and sets its feed serial, in one statement for many nodes; their new totals. */
function addCounts(db: Store, rows: readonly [id: string, count: number, serial: number][], now: string) {
  // Cast: PostgreSQL types a VALUES list's parameters as text otherwise. Its columns are column1..3 on both dialects.
  const values = sql.join(
    rows.map(([id, count, serial]) => sql`(cast(${id} as text), cast(${count} as integer), cast(${serial} as integer))`),
  )
  return db
    .updateTable('node_downloads')
    .from(sql<{ column1: string; column2: number; column3: number }>`(values ${values})`.as('v'))
    .set({ downloads: sql`node_downloads.downloads + v.column2`, serial: sql`v.column3`, changed_at: now })
    .where(sql<boolean>`node_downloads.node_id = v.column1`)
    .returning(['node_downloads.node_id', 'node_downloads.downloads'])
    .execute()
}

/**
 * Adds the downloads and feeds each counted node as changed, in one transaction. The counted nodes are given a serial
 * each (an unknown id's stays unused: the feed has gaps wherever an entry moved on). Its first statement writes, so on
 * SQLite it waits for the write lock rather than failing on a snapshot another connection's commit made stale.
 */
export function writeDownloadCounts(db: Store, counts: ReadonlyMap<string, number>, now: string): Promise<CountsWritten> {
  return db.transaction().execute(async (trx) => {
    const totals = new Map<string, number>()
    if (!counts.size) return { totals }
    const serials = await reserveSerials(trx, counts.size)
    const rows = [...counts].map(([id, n], i) => [id, n, serials.first + i] as [string, number, number])
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
      for (const row of await addCounts(trx, rows.slice(i, i + ROWS_PER_STATEMENT), now)) totals.set(row.node_id, Number(row.downloads))
    return { totals, serials }
  })
}
