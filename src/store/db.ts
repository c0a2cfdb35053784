/** Opens the store: the SQLite file with its pragmas, migrated to the newest schema, behind a Kysely handle. */
import { Database } from 'bun:sqlite'
import { chmodSync } from 'node:fs'
import { Kysely, SqliteDialect } from 'kysely'
import { migrate } from './migrate'
import type { DB } from './schema'
import { adaptBunSqlite } from './sqlite-adapter'

export type Store = Kysely<DB>

/** `path` is a file or ':memory:'. The file (it holds emails and token hashes) is readable by its owner only. */
export async function openStore(path: string): Promise<Store> {
  const sqlite = new Database(path, { create: true, strict: true })
  if (path !== ':memory:') chmodSync(path, 0o600)
  return storeOn(sqlite)
}

/** The store on an open SQLite database (a file, or one in memory such as a deserialized copy), migrated. */
export async function storeOn(sqlite: Database): Promise<Store> {
  // First, so that every later statement waits for another process's lock instead of failing at once.
  sqlite.run('PRAGMA busy_timeout = 5000')
  sqlite.run('PRAGMA journal_mode = WAL')
  sqlite.run('PRAGMA foreign_keys = ON')
  sqlite.run('PRAGMA synchronous = NORMAL')
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: adaptBunSqlite(sqlite) }) })
  try {
    await migrate(db, 'sqlite')
  } catch (err) {
    await db.destroy()
    throw err
  }
  return db
}

/**
 * A second, read-only handle on an existing store file (for a worker thread): no migration, no writes. WAL lets
 * it read while the main handle writes.
 */
export function openStoreReader(path: string): Store {
  const sqlite = new Database(path, { readonly: true, strict: true })
  sqlite.run('PRAGMA busy_timeout = 5000')
  return new Kysely<DB>({ dialect: new SqliteDialect({ database: adaptBunSqlite(sqlite) }) })
}

/** A unique-constraint violation, in SQLite's words or PostgreSQL's code. */
export function isUniqueViolation(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: string }).code
  return (
    err.message.includes('UNIQUE constraint failed') ||
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE'
  )
}
