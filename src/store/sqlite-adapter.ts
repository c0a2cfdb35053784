/** Gives bun:sqlite the better-sqlite3 shape that Kysely's built-in SqliteDialect expects. */
import type { Database } from 'bun:sqlite'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

type Param = string | number | bigint | boolean | null | Uint8Array

/** Prepared statements kept for reuse: parsing is a large part of a bulk insert's cost, and its SQL repeats. */
const CACHED_STATEMENTS = 64

export function adaptBunSqlite(sqlite: Database): SqliteDatabase {
  const cache = new Map<string, ReturnType<Database['prepare']>>()
  const prepared = (sql: string) => {
    let stmt = cache.get(sql)
    if (stmt)
      cache.delete(sql) // moves to the newest end
    else {
      stmt = sqlite.prepare(sql)
      if (cache.size >= CACHED_STATEMENTS) {
        const oldest = cache.keys().next().value!
        cache.get(oldest)!.finalize()
        cache.delete(oldest)
      }
    }
    cache.set(sql, stmt)
    return stmt
  }
  return {
    close: () => {
      for (const stmt of cache.values()) stmt.finalize()
      cache.clear()
      sqlite.close()
    },
    prepare(sql: string): SqliteStatement {
      const stmt = prepared(sql)
      const args = (params: ReadonlyArray<unknown>) => params as Param[]
      return {
        // A statement that yields columns is a read (SELECT, or a write with RETURNING).
        reader: stmt.columnNames.length > 0,
        all: (params) => stmt.all(...args(params)),
        run: (params) => {
          const { changes, lastInsertRowid } = stmt.run(...args(params))
          return { changes, lastInsertRowid }
        },
        iterate: (params) => stmt.iterate(...args(params)),
      }
    },
  }
}
