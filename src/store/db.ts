/**
 * Opens the store, migrated to the newest schema, behind a Kysely handle: a SQLite file with its pragmas (the
 * default), or a PostgreSQL database for several instances that share one registry.
 */
import { Database } from 'bun:sqlite'
import { chmodSync } from 'node:fs'
import { Kysely, PostgresAdapter, sql, type RawBuilder } from 'kysely'
import type { SQL } from 'bun'
import { migrate } from './migrate'
import type { Dialect } from './migrations/migration'
import { isConnectionLost, isPostgresUrl, openPostgres } from './postgres'
import type { DB } from './schema'
import { bunSqliteDialect, isDatabaseLocked, LOCK_WAIT_MS, lockWaits } from './sqlite-adapter'

export type Store = Kysely<DB>

const clients = new WeakMap<Store, SQL>()

/**
 * `location` is a SQLite file, ':memory:', or a `postgres://` URL. The SQLite file (it holds emails and token
 * hashes) is readable by its owner only. `poolSize` bounds PostgreSQL connections.
 */
export async function openStore(location: string, opts: { poolSize?: number } = {}): Promise<Store> {
  if (isPostgresUrl(location)) {
    const pg = openPostgres(location, opts)
    clients.set(pg.db, pg.client)
    return migrated(pg.db)
  }
  const sqlite = new Database(location, { create: true, strict: true })
  if (location !== ':memory:') chmodSync(location, 0o600)
  return storeOn(sqlite)
}

/** The store on an open SQLite database (a file, or one in memory such as a deserialized copy), migrated. */
export async function storeOn(sqlite: Database): Promise<Store> {
  return migrated(sqliteStore(sqlite))
}

/**
 * A second handle that writes to an existing store file beside the main one (for a worker thread): the same pragmas,
 * no migration (the process that opened the store first has migrated it). `autocheckpointPages`: the log size past
 * which its commits copy the log themselves (SQLite's default, 1,000 pages, is a copy after nearly every large commit).
 */
export function openStoreWriter(path: string, opts: { autocheckpointPages?: number } = {}): Store {
  const sqlite = new Database(path, { strict: true })
  const store = sqliteStore(sqlite)
  if (opts.autocheckpointPages !== undefined) sqlite.run(`PRAGMA wal_autocheckpoint = ${Math.trunc(opts.autocheckpointPages)}`)
  return store
}

function sqliteStore(sqlite: Database): Store {
  // First, so that the pragmas below wait for another connection opening the file instead of failing at once.
  sqlite.run(`PRAGMA busy_timeout = ${LOCK_WAIT_MS}`)
  enterWal(sqlite)
  sqlite.run('PRAGMA foreign_keys = ON')
  sqlite.run('PRAGMA synchronous = NORMAL')
  // Statement journals (a multi-row write keeps one, to undo just that statement) and temporary tables in memory,
  // not in temporary files: a mirror's bulk inserts otherwise write hundreds of MB to /var/tmp for nothing.
  sqlite.run('PRAGMA temp_store = MEMORY')
  // From here a locked database is waited for on a timer, with the event loop free (bunSqliteDialect).
  sqlite.run('PRAGMA busy_timeout = 0')
  return new Kysely<DB>({ dialect: bunSqliteDialect(sqlite) })
}

/**
 * Turns the file to WAL (once turned, it stays). The busy timeout does not cover this on a file not yet turned: while
 * another connection holds its write lock (another process creating the same new store, midway through turning it),
 * SQLite refuses at once rather than wait, and may answer the old mode instead of an error. So it is asked again, on
 * the waits a statement refused by a lock takes (lockWaits); it runs before anything is served, so the waits block.
 */
function enterWal(sqlite: Database): void {
  const waits = lockWaits()
  for (;;) {
    let mode: string | undefined
    let refused: unknown
    try {
      mode = sqlite.query<{ journal_mode: string }, []>('PRAGMA journal_mode = WAL').get()?.journal_mode
    } catch (err) {
      if (!isDatabaseLocked(err)) throw err
      refused = err
    }
    // An in-memory database keeps its journal in memory: it has no file to turn.
    if (mode === 'wal' || mode === 'memory') return
    const wait = waits()
    if (wait === undefined) {
      throw (
        refused ??
        new Error(
          `the store stayed in journal mode "${mode}" for ${LOCK_WAIT_MS} ms: another process holds it, or its file cannot be written`,
        )
      )
    }
    Bun.sleepSync(wait)
  }
}

async function migrated(db: Store): Promise<Store> {
  try {
    await migrate(db, dialectOf(db))
  } catch (err) {
    await db.destroy()
    throw err
  }
  return db
}

/** How much of the store file a reader maps (SQLite's own ceiling is about 2 GiB). */
const READER_MMAP_BYTES = 2 ** 31 - 2 ** 16

/**
 * A second, read-only handle on an existing store file (for a worker thread): no migration, no writes. WAL lets
 * it read while the main handle writes. The file is read through a memory map: the warm-up's fallback scans whole
 * tables, and page by page through read() each page is a system call (at 100,000 nodes, a search 100 ms mapped
 * against 200 through read() on rows three times as wide). The mapped pages count as resident memory only while
 * it is open (the warm-up).
 */
export function openStoreReader(path: string): Store {
  const sqlite = new Database(path, { readonly: true, strict: true })
  sqlite.run('PRAGMA busy_timeout = 5000')
  sqlite.run(`PRAGMA mmap_size = ${READER_MMAP_BYTES}`)
  return new Kysely<DB>({ dialect: bunSqliteDialect(sqlite) })
}

/**
 * Planner statistics for tables just filled in bulk, now rather than when autovacuum comes round (a minute or more,
 * during which PostgreSQL plans from table sizes alone). SQLite plans the store's queries well without; a no-op there.
 */
export async function refreshStatistics(db: Store, tables: readonly string[]): Promise<void> {
  if (dialectOf(db) !== 'postgres' || !tables.length) return
  await sql`analyze ${sql.join(tables.map((table) => sql.table(table)))}`.execute(db)
}

/** Which SQL the store speaks (a transaction's handle answers like its store's). */
export const dialectOf = (db: Kysely<any>): Dialect => (db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite')

/**
 * The text of `column` over a group's rows in its order, joined by `separator` (the one aggregate the dialects spell
 * apart; SQLite orders inside it since 3.44, Bun's is newer). In order, so that the same rows give the same text.
 */
export const joinedText = (db: Kysely<any>, column: string, separator: string): RawBuilder<string | null> =>
  dialectOf(db) === 'postgres'
    ? sql`string_agg(${sql.ref(column)}, ${separator} order by ${sql.ref(column)})`
    : sql`group_concat(${sql.ref(column)}, ${separator} order by ${sql.ref(column)})`

/** The PostgreSQL client under this store (for LISTEN), or undefined on SQLite. */
export const postgresClient = (db: Store): SQL | undefined => clients.get(db)

/** A unique-constraint violation, in SQLite's words or PostgreSQL's code (`errno` in Bun's client). */
export function isUniqueViolation(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const { code, errno } = err as { code?: string; errno?: unknown }
  return (
    err.message.includes('UNIQUE constraint failed') ||
    code === '23505' ||
    errno === '23505' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE'
  )
}

/**
 * The database cannot be reached, is shutting down or is busy: the request may succeed once it is back (503, not 500).
 * A connection lost (postgres.ts's isConnectionLost: Bun's codes, SQLSTATE classes 08 and 57P), or one not made or
 * timed out (Bun's codes), or a server with too many connections (53300); SQLite says it is locked.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  // A SQLite store another connection kept locked past the wait (a long command or import on the file).
  if (isDatabaseLocked(err) || isConnectionLost(err)) return true
  const { code, errno } = err as { code?: string; errno?: unknown }
  if (typeof code === 'string' && /^ERR_POSTGRES_.*TIMEOUT|^E(CONNREFUSED|HOSTUNREACH|TIMEDOUT)$/.test(code)) return true
  return errno === '53300'
}
