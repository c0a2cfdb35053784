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

/** The table that holds PostgreSQL's schema version (SQLite keeps it in the file header). */
export const PG_VERSION_TABLE = 'registry_schema_version'
/** Arbitrary, fixed: the first half of the advisory lock's key; the second is the schema's name, so schemas migrate apart. */
const PG_LOCK_KEY = 0x7267_6d69

const postgresRecord: VersionRecord = {
  async begin(db) {
    await sql`begin`.execute(db)
    // Held until commit or rollback: a second instance starting now waits here, then finds the work done.
    await sql`select pg_advisory_xact_lock(${PG_LOCK_KEY}, hashtext(current_schema()))`.execute(db)
    await sql`create table if not exists ${sql.table(PG_VERSION_TABLE)} (id integer primary key check (id = 1), version integer not null)`.execute(
      db,
    )
  },
  async read(db) {
    const row = await db.selectFrom(PG_VERSION_TABLE).select('version').executeTakeFirst()
    return row ? Number(row.version) : 0
  },
  write: (db, version) =>
    db
      .insertInto(PG_VERSION_TABLE)
      .values({ id: 1, version })
      .onConflict((oc) => oc.column('id').doUpdateSet({ version }))
      .execute()
      .then(() => {}),
  end: sqliteRecord.end,
}

const RECORDS: Record<Dialect, VersionRecord> = { sqlite: sqliteRecord, postgres: postgresRecord }

/** Applies every migration newer than the store's version in one transaction; returns the versions before and after. */
export async function migrate(store: Kysely<any>, dialect: Dialect, now = new Date().toISOString()): Promise<{ from: number; to: number }> {
  const record = RECORDS[dialect]
  // One connection throughout: a pool would hand the lock, the steps and the commit to different ones.
  return store.connection().execute(async (db) => {
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
  })
}

/** The schema version the store holds now (for /ready: a store another executable moved on is not this one's). */
export const schemaVersion = (db: Kysely<any>, dialect: Dialect): Promise<number> => RECORDS[dialect].read(db)
