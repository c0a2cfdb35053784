/** Gives bun:sqlite the better-sqlite3 shape that Kysely's built-in SqliteDialect expects. */
import type { Database } from 'bun:sqlite'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

type Param = string | number | bigint | boolean | null | Uint8Array

export function adaptBunSqlite(sqlite: Database): SqliteDatabase {
  return {
    close: () => sqlite.close(),
    prepare(sql: string): SqliteStatement {
      const stmt = sqlite.prepare(sql)
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
