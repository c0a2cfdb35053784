/** Schema 16 on SQLite, from a store at version 15: blob intents, and archives found by their SHA-256. */
import { Database } from 'bun:sqlite'
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { Kysely, SqliteDialect } from 'kysely'
import { MIGRATIONS } from '../../src/store/migrations'
import { adaptBunSqlite } from '../../src/store/sqlite-adapter'
import { openStore } from '../../src/store/db'
import { intendBlobs } from '../../src/services/blob-intent'
import { referencedAmong } from '../../src/store/blob-references'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('blob-intents-migration')
afterEach(() => dirs.cleanup())

const T = '2026-01-01T00:00:00.000Z'
const SHA = 'ab'.repeat(32)

test('a store at version 15 gets blob intents and the sha256 indexes, keeps its archives, and they count as references', async () => {
  const path = join(dirs.make(), 'registry.db')
  const sqlite = new Database(path)
  const old = new Kysely<any>({ dialect: new SqliteDialect({ database: adaptBunSqlite(sqlite) }) })
  for (const step of MIGRATIONS.filter((m) => m.version <= 15)) await step.up(old, { dialect: 'sqlite', now: T })
  sqlite.run('pragma user_version = 15')
  sqlite.run(`insert into publishers (id, name, created_at, updated_at) values ('acme', 'Acme', '${T}', '${T}')`)
  sqlite.run(
    `insert into nodes (id, normalized_id, publisher_id, name, created_at, updated_at) values ('pack', 'pack', 'acme', 'Pack', '${T}', '${T}')`,
  )
  sqlite.run(`insert into node_versions (id, node_id, version, created_at, updated_at) values ('v1', 'pack', '1.0.0', '${T}', '${T}')`)
  sqlite.run(`insert into archives (version_id, sha256, size_bytes, format, created_at) values ('v1', '${SHA}', 3, 'zip', '${T}')`)
  await old.destroy()

  const db = await openStore(path)
  try {
    const indexes = (await db
      .selectFrom('sqlite_master' as never)
      .select('name' as never)
      .where('type' as never, '=', 'index' as never)
      .execute()) as {
      name: string
    }[]
    expect(indexes.map((i) => i.name)).toEqual(expect.arrayContaining(['archives_sha256', 'mirror_archives_sha256', 'blob_intents_sha256']))
    const other = 'cd'.repeat(32)
    expect([...(await referencedAmong(db, [SHA, other]))]).toEqual([SHA])
    await intendBlobs({ db, now: () => new Date(T) }, [other])
    expect([...(await referencedAmong(db, [SHA, other]))].sort()).toEqual([SHA, other])
  } finally {
    await db.destroy()
  }
})
