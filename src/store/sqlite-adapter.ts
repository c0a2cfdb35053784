/** Gives bun:sqlite the better-sqlite3 shape that Kysely's built-in SqliteDialect expects, and its transactions IMMEDIATE. */
import type { Database } from 'bun:sqlite'
import {
  CompiledQuery,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  type SqliteStatement,
  type TransactionSettings,
} from 'kysely'

type Param = string | number | bigint | boolean | null | Uint8Array

/**
 * Prepared statements kept for reuse: parsing is a large part of a bulk insert's cost and of a point read's, and
 * their SQL repeats (the read paths' lists are padded to a few lengths, store/prepared.ts).
 */
const CACHED_STATEMENTS = 256

interface Cached {
  stmt: ReturnType<Database['prepare']>
  /** A statement that yields columns is a read (SELECT, or a write with RETURNING); asked once, not per run. */
  reader: boolean
}

export function adaptBunSqlite(sqlite: Database): SqliteDatabase {
  const cache = new Map<string, Cached>()
  const prepared = (sql: string) => {
    let entry = cache.get(sql)
    if (entry)
      cache.delete(sql) // moves to the newest end
    else {
      const stmt = sqlite.prepare(sql)
      entry = { stmt, reader: stmt.columnNames.length > 0 }
      if (cache.size >= CACHED_STATEMENTS) {
        const oldest = cache.keys().next().value!
        cache.get(oldest)!.stmt.finalize()
        cache.delete(oldest)
      }
    }
    cache.set(sql, entry)
    return entry
  }
  return {
    close: () => {
      for (const { stmt } of cache.values()) stmt.finalize()
      cache.clear()
      sqlite.close()
    },
    prepare(sql: string): SqliteStatement {
      const { stmt, reader } = prepared(sql)
      const args = (params: ReadonlyArray<unknown>) => params as Param[]
      return {
        reader,
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

/**
 * Kysely's SQLite dialect on bun:sqlite, its transactions begun IMMEDIATE unless declared read-only: the write lock
 * is taken (or waited for, up to the busy timeout) before the transaction reads. Begun DEFERRED, a transaction that
 * read and then wrote failed at once, `database is locked` with no wait, whenever another connection (a command
 * beside the server, another instance, the download writer thread) committed between its read and its write.
 */
export function bunSqliteDialect(sqlite: Database): SqliteDialect {
  const config = { database: adaptBunSqlite(sqlite) }
  return new (class extends SqliteDialect {
    override createDriver(): Driver {
      return new ImmediateSqliteDriver(config)
    }
  })(config)
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(settings?.accessMode === 'read only' ? 'begin' : 'begin immediate'))
  }
}
