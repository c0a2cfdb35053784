/**
 * Writing a batch of download counts: the nodes' narrow rows (schema 17), with the serials that feed them, in one
 * transaction. The server runs it in a thread of its own on a SQLite file (download-writer.ts), elsewhere on the
 * store's own handle. Neither the node's wide row nor its `changes` row is touched: a count is fed from its narrow
 * row (store/changes.ts `listChanges`).
 */
import { reserveSerials } from './changes'
import { sql } from 'kysely'
import { dialectOf, type Store } from './db'
import { prepared } from './prepared'

/** What a batch wrote: each node's new total (unknown ids are left out), and the feed serials its nodes were given. */
export interface CountsWritten {
  totals: Map<string, number>
  serials?: { first: number; last: number }
}

/**
 * Adds a node's count and sets its feed serial; its new total (none for an unknown id). On SQLite, one statement a
 * node, prepared once: in a loop at 100,000 nodes, 36 µs a node, where one UPDATE ... FROM (VALUES ...) for 1,000
 * nodes took 60.
 */
const addCount = prepared<{ id: string; count: number; serial: number; now: string }, { downloads: number }>((db, p) =>
  db
    .updateTable('node_downloads')
    .set((eb) => ({
      downloads: eb('downloads', '+', p.count as unknown as number),
      serial: p.serial as unknown as number,
      changed_at: p.now,
    }))
    .where('node_id', '=', p.id)
    .returning('downloads'),
)

/** Nodes per statement on PostgreSQL: three bound values each, well within its 65,535. */
const ROWS_PER_STATEMENT = 1000

/**
 * On PostgreSQL, many nodes' counts and serials in one statement: a round trip a node would hold the write turn
 * (services/write-turn.ts) for a second's 3,000 of them.
 */
function addCounts(db: Store, rows: readonly [id: string, count: number, serial: number][], now: string) {
  // Cast: PostgreSQL types a VALUES list's parameters as text otherwise. Its columns are column1..3.
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
    const rows = [...counts].map(([id, count], i) => [id, count, serials.first + i] as [string, number, number])
    if (dialectOf(trx) === 'postgres') {
      for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
        for (const row of await addCounts(trx, rows.slice(i, i + ROWS_PER_STATEMENT), now)) totals.set(row.node_id, Number(row.downloads))
    } else
      for (const [id, count, serial] of rows) {
        const [row] = await addCount(trx, { id, count, serial, now })
        if (row) totals.set(id, Number(row.downloads))
      }
    return { totals, serials }
  })
}
