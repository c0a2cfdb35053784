/** Opens the SQLite store: pragmas, the embedded schema, and the Kysely handle over it. */
import { Database } from 'bun:sqlite'
import { Kysely, SqliteDialect } from 'kysely'
import schemaSql from '../../schema.sql' with { type: 'text' }
import type { DB } from './schema'
import { adaptBunSqlite } from './sqlite-adapter'

export type Store = Kysely<DB>

/** `path` is a file or ':memory:'. The schema is applied idempotently on every open. */
export function openStore(path: string): Store {
  const sqlite = new Database(path, { create: true, strict: true })
  sqlite.run('PRAGMA journal_mode = WAL')
  sqlite.run('PRAGMA foreign_keys = ON')
  sqlite.run('PRAGMA busy_timeout = 5000')
  sqlite.run('PRAGMA synchronous = NORMAL')
  sqlite.run(schemaSql)
  return new Kysely<DB>({ dialect: new SqliteDialect({ database: adaptBunSqlite(sqlite) }) })
}

/** A unique-constraint violation, in SQLite's words or PostgreSQL's code. */
export function isUniqueViolation(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  return (
    err.message.includes('UNIQUE constraint failed') ||
    (err as { code?: string }).code === '23505' ||
    (err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE'
  )
}
