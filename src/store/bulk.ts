/**
 * Bulk inserts and lookups without building a query tree per value: for a mirror's batches of thousands of
 * rows, Kysely's tree (every value frozen) costs more than SQLite's own work. Same SQL on SQLite and PostgreSQL
 * (placeholders aside), in fixed-size statements so that prepared statements are reused.
 */
import { createQueryId, RawNode, SqliteAdapter, type CompiledQuery, type Kysely } from 'kysely'

const ROWS_PER_STATEMENT = 250
const KEYS_PER_STATEMENT = 500

const isSqlite = (db: Kysely<any>) => db.getExecutor().adapter instanceof SqliteAdapter

/** When this thread last let other work run. */
let breathed = performance.now()
/** The longest this thread works in one go in a bulk write, ms. */
const BREATH_MS = 4

/**
 * Lets other work run (network I/O: the next page of a sync, a serving registry's requests) when this thread has
 * worked for a few ms since it last did. SQLite answers synchronously, and a batch of thousands of rows is read,
 * planned and written in one transaction: without this, the next request of a sync waits for the whole batch.
 * Cheap to call often (a clock read); loops over thousands of items call it every so many items.
 */
export async function breathe(): Promise<void> {
  if (performance.now() - breathed < BREATH_MS) return
  await new Promise<void>((resolve) => setImmediate(resolve))
  breathed = performance.now()
}

// Built by hand rather than by CompiledQuery.raw, which freezes the parameter list: with thousands of values per
// statement that freeze costs more than SQLite's own work.
const compiled = (sql: string, parameters: unknown[]): CompiledQuery => ({
  sql,
  parameters,
  query: RawNode.createWithSql(sql),
  queryId: createQueryId(),
})

/**
 * The rows of `select` (a query up to its where clause, with no parameters of its own) whose `column` is one
 * of `keys`. Every statement lists the same number of keys (the last one repeats a key to fill up), so that
 * one prepared statement serves a whole batch.
 */
export async function selectIn<R>(db: Kysely<any>, select: string, column: string, keys: readonly unknown[]): Promise<R[]> {
  const unique = [...new Set(keys)]
  if (!unique.length) return []
  const sqlite = isSqlite(db)
  const size = Math.min(KEYS_PER_STATEMENT, unique.length)
  const marks = Array.from({ length: size }, (_, i) => (sqlite ? '?' : `$${i + 1}`)).join(', ')
  const sql = `${select} where ${column} in (${marks})`
  const out: R[] = []
  for (let i = 0; i < unique.length; i += size) {
    const part = unique.slice(i, i + size)
    while (part.length < size) part.push(part[0])
    await breathe()
    const { rows } = await db.executeQuery<R>(compiled(sql, part))
    for (const row of rows) out.push(row)
  }
  return out
}

/** `(?, ?), (?, ?)` for `rows` rows of `columns` values (`($1, $2), ($3, $4)` on PostgreSQL), made once per shape. */
const valuesLists = new Map<string, string>()
function valuesList(sqlite: boolean, rows: number, columns: number): string {
  const key = `${sqlite}:${rows}:${columns}`
  let list = valuesLists.get(key)
  if (list === undefined) {
    const tuples: string[] = []
    for (let r = 0; r < rows; r++) {
      const marks: string[] = []
      for (let c = 1; c <= columns; c++) marks.push(sqlite ? '?' : `$${r * columns + c}`)
      tuples.push(`(${marks.join(', ')})`)
    }
    list = tuples.join(', ')
    if (valuesLists.size < 256) valuesLists.set(key, list)
  }
  return list
}

/** The rows' values, row after row, in the order of `columns` (missing ones as null). */
function flatValues(rows: readonly Record<string, unknown>[], columns: readonly string[]): unknown[] {
  const params: unknown[] = []
  for (const row of rows) for (const c of columns) params.push(row[c] ?? null)
  return params
}

/** Rows of one shape in statements of at most ROWS_PER_STATEMENT rows (within the bound-value limit), breathing between them. */
async function inStatements(
  db: Kysely<any>,
  rows: readonly Record<string, unknown>[],
  statement: (values: string, columns: string[]) => string,
): Promise<void> {
  if (!rows.length) return
  const columns = Object.keys(rows[0]!)
  const sqlite = isSqlite(db)
  const perStatement = Math.min(ROWS_PER_STATEMENT, Math.floor(30_000 / columns.length))
  for (let i = 0; i < rows.length; i += perStatement) {
    await breathe()
    const part = rows.slice(i, i + perStatement)
    await db.executeQuery(compiled(statement(valuesList(sqlite, part.length, columns.length), columns), flatValues(part, columns)))
  }
}

const quoted = (columns: readonly string[]) => columns.map((c) => `"${c}"`).join(', ')

/** `insert into table (...) values ...` for rows of one shape; `onConflict` is appended as written (e.g. `on conflict (a) do update set b = excluded.b`). */
export async function insertRows(db: Kysely<any>, table: string, rows: readonly Record<string, unknown>[], onConflict = ''): Promise<void> {
  await inStatements(
    db,
    rows,
    (values, columns) => `insert into "${table}" (${quoted(columns)}) values ${values}${onConflict ? ` ${onConflict}` : ''}`,
  )
}

/**
 * Sets columns of many rows, each to its own values, matched on `key`: `with v (...) as (values ...) update ...
 * from v` (SQLite and PostgreSQL alike). Rows of one shape; every column but `key` is set.
 */
export async function updateRows(db: Kysely<any>, table: string, key: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  await inStatements(db, rows, (values, columns) => {
    const set = columns.filter((c) => c !== key).map((c) => `"${c}" = v."${c}"`)
    return `with v (${quoted(columns)}) as (values ${values}) update "${table}" set ${set.join(', ')} from v where "${table}"."${key}" = v."${key}"`
  })
}
