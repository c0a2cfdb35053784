/** Brings a store's schema forward to the newest version, under a lock, and refuses a store newer than this executable. */
import { sql, type Kysely } from 'kysely'
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations'
import type { Dialect } from './migrations/migration'

export class NewerSchemaError extends Error {
  constructor(readonly found: number) {
    super(
      `the store has schema version ${found}, written by a newer registry-mirror; this executable knows versions up to ${LATEST_SCHEMA_VERSION}: run a newer executable (stores are never migrated backward)`,
    )
  }
}

/** How one dialect locks out other starters, and where it records the schema version. */
interface VersionRecord {
  /** Takes the lock and opens the transaction the migrations run in. */
  begin(db: Kysely<any>): Promise<void>
  read(db: Kysely<any>): Promise<number>
  write(db: Kysely<any>, version: number): Promise<void>
  end(db: Kysely<any>, ok: boolean): Promise<void>
}

const sqliteRecord: VersionRecord = {
  // BEGIN IMMEDIATE takes the write lock at once: a second process starting on the same file waits here.
  begin: (db) => sql`begin immediate`.execute(db).then(() => {}),
  async read(db) {
    const version = (await sql<{ user_version: number }>`pragma user_version`.execute(db)).rows[0]!.user_version
    if (version !== 0) return version
    // Stores made before versioning have tables but version 0: they hold version 1, the baseline.
    const tables = await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = 'users'`.execute(db)
    return Number(tables.rows[0]!.n) > 0 ? 1 : 0
  },
  write: (db, version) => sql`pragma user_version = ${sql.raw(String(Math.trunc(version)))}`.execute(db).then(() => {}),
  end: (db, ok) =>
    sql
      .raw(ok ? 'commit' : 'rollback')
      .execute(db)
      .then(() => {}),
}

const RECORDS: Partial<Record<Dialect, VersionRecord>> = { sqlite: sqliteRecord }

/** Applies every migration newer than the store's version in one transaction; returns the versions before and after. */
export async function migrate(db: Kysely<any>, dialect: Dialect, now = new Date().toISOString()): Promise<{ from: number; to: number }> {
  const record = RECORDS[dialect]
  if (!record) throw new Error(`migrations for ${dialect} are not available`)
  await record.begin(db)
  let ok = false
  try {
    const from = await record.read(db)
    if (from > LATEST_SCHEMA_VERSION) throw new NewerSchemaError(from)
    for (const step of MIGRATIONS) if (step.version > from) await step.up(db, { dialect, now })
    if (from !== LATEST_SCHEMA_VERSION) await record.write(db, LATEST_SCHEMA_VERSION)
    ok = true
    return { from, to: LATEST_SCHEMA_VERSION }
  } finally {
    await record.end(db, ok)
  }
}
