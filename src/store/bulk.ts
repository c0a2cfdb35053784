/**
 * Bulk inserts without building a query tree per value: for a mirror's batches of thousands of rows, Kysely's
 * tree (every value frozen) costs more than SQLite's own work. Same SQL on SQLite and PostgreSQL (placeholders
 * aside), in fixed-size statements so that prepared statements are reused.
 */
import { createQueryId, RawNode, SqliteAdapter, type CompiledQuery, type Kysely } from 'kysely'

const ROWS_PER_STATEMENT = 250

/** `insert into table (...) values ...` for rows of one shape; `onConflict` is appended as written (e.g. `on conflict (a) do update set b = excluded.b`). */
export async function insertRows(db: Kysely<any>, table: string, rows: readonly Record<string, unknown>[], onConflict = ''): Promise<void> {
  if (!rows.length) return
  const columns = Object.keys(rows[0]!)
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter
  const head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values `
  const perStatement = Math.min(ROWS_PER_STATEMENT, Math.floor(30_000 / columns.length))
  for (let i = 0; i < rows.length; i += perStatement) {
    const part = rows.slice(i, i + perStatement)
    const params: unknown[] = []
    const tuples = part.map((row) => {
      const marks = columns.map((c) => {
        params.push(row[c] ?? null)
        return sqlite ? '?' : `$${params.length}`
      })
      return `(${marks.join(', ')})`
    })
    const sql = head + tuples.join(', ') + (onConflict ? ` ${onConflict}` : '')
    // Built by hand rather than by CompiledQuery.raw, which freezes the parameter list: with thousands of values
    // per statement that freeze cost more than SQLite's insert.
    const query: CompiledQuery = { sql, parameters: params, query: RawNode.createWithSql(sql), queryId: createQueryId() }
    await db.executeQuery(query)
    // SQLite answers synchronously, so a long batch would hold the event loop: yielding lets network I/O (the
    // next page of a sync, requests of a serving registry) go on between statements.
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}
