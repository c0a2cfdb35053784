/**
 * Gives bun:sqlite the better-sqlite3 shape that Kysely's built-in SqliteDialect expects, its transactions IMMEDIATE,
 * and its waits for another connection's write lock off the event loop.
 */
import type { Database } from 'bun:sqlite'
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type QueryResult,
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
 * is taken (or waited for) before the transaction reads. Begun DEFERRED, a transaction that read and then wrote
 * failed at once, `database is locked` with no wait, whenever another connection (a command beside the server,
 * another instance, the download writer thread) committed between its read and its write.
 *
 * The wait is on a timer, not in SQLite's busy handler: bun:sqlite runs a statement on the calling thread, so a busy
 * timeout slept with the event loop held for as long as the other connection kept its transaction (a second's
 * download counts at 100,000 nodes, a mirror's batch, a command's write). The connection's own busy timeout is 0
 * (db.ts), and a statement that finds the database locked outside a transaction (a BEGIN, or a statement alone) is
 * run again after 1, 2, 4, then every 8 ms, for up to LOCK_WAIT_MS in all. Inside a transaction begun IMMEDIATE the
 * lock is held, and nothing waits. Between its tries it lets the connection go, so that reads (which the other
 * connection's lock does not stop) are answered meanwhile.
 */
export function bunSqliteDialect(sqlite: Database): SqliteDialect {
  const config = { database: adaptBunSqlite(sqlite) }
  return new (class extends SqliteDialect {
    override createDriver(): Driver {
      return new ImmediateSqliteDriver(config, sqlite)
    }
    // The driver hands its one connection out itself (ConnectionTurns), so that Kysely's own lock on it, held from a
    // statement's start to its end, does not keep reads waiting while a write waits for another connection.
    override createAdapter(): DialectAdapter {
      return new (class extends SqliteAdapter {
        override get supportsMultipleConnections() {
          return true
        }
      })()
    }
  })(config)
}

/** How long a statement waits for another connection's write lock before it fails (SQLite's busy timeout before). */
export const LOCK_WAIT_MS = 5000
const LONGEST_POLL_MS = 8

/**
 * The waits before each new try of a statement another connection's lock refused: 1, 2, 4, then every 8 ms, until
 * LOCK_WAIT_MS from the first refusal would pass (then undefined: give up). Made at the first refusal, not for each
 * statement.
 */
export function lockWaits(): () => number | undefined {
  const deadline = performance.now() + LOCK_WAIT_MS
  let next = 1
  return () => {
    const wait = next
    if (performance.now() + wait > deadline) return undefined
    next = Math.min(2 * next, LONGEST_POLL_MS)
    return wait
  }
}

/** Whether SQLite said the database is locked, in any of its words for it (SQLITE_BUSY and its extended codes). */
export const isDatabaseLocked = (err: unknown): boolean => {
  const { errno } = err as { errno?: unknown }
  return typeof errno === 'number' && errno % 256 === 5 // PostgreSQL's errno is its SQLSTATE, a string
}

/** The one connection, to one holder at a time (a statement, or a transaction from its BEGIN to its end), in turn. */
class ConnectionTurns {
  #held = false
  readonly #waiting: (() => void)[] = []

  async take(): Promise<void> {
    if (!this.#held) this.#held = true
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
  }

  give(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#held = false
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #sqlite: Database
  readonly #turns = new ConnectionTurns()
  #connection?: DatabaseConnection

  constructor(config: ConstructorParameters<typeof SqliteDriver>[0], sqlite: Database) {
    super(config)
    this.#sqlite = sqlite
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#turns.take()
    this.#connection ??= waitingForLocks(await super.acquireConnection(), this.#sqlite, this.#turns)
    return this.#connection
  }

  override async releaseConnection(): Promise<void> {
    this.#turns.give()
  }

  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(settings?.accessMode === 'read only' ? 'begin' : 'begin immediate'))
  }
}

function waitingForLocks(connection: DatabaseConnection, sqlite: Database, turns: ConnectionTurns): DatabaseConnection {
  return {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      let waits: (() => number | undefined) | undefined
      for (;;) {
        const alone = !sqlite.inTransaction
        let wait: number
        try {
          return await connection.executeQuery<R>(query)
        } catch (err) {
          if (!alone || !isDatabaseLocked(err)) throw err
          const next = (waits ??= lockWaits())()
          if (next === undefined) throw err
          wait = next
        }
        // No transaction is open on the connection: another holder may use it meanwhile, and give it back.
        turns.give()
        await Bun.sleep(wait)
        await turns.take()
      }
    },
    streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
  }
}
