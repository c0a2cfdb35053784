/** Schema 17 on SQLite, from a store at version 16 with counts (test/support/node-downloads-migration.ts says what). */
import { Database } from 'bun:sqlite'
import { afterEach, test } from 'bun:test'
import { join } from 'node:path'
import { Kysely, SqliteDialect } from 'kysely'
import { MIGRATIONS } from '../../src/store/migrations'
import { adaptBunSqlite } from '../../src/store/sqlite-adapter'
import { openStore } from '../../src/store/db'
import { expectCountsOfVersion16Nodes, insertVersion16Nodes } from '../support/node-downloads-migration'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('node-downloads-migration')
afterEach(() => dirs.cleanup())

test('a store at version 16 moves its counts into narrow rows; every reader and the feed go on from them', async () => {
  const path = join(dirs.make(), 'registry.db')
  const sqlite = new Database(path)
  const old = new Kysely<any>({ dialect: new SqliteDialect({ database: adaptBunSqlite(sqlite) }) })
  for (const step of MIGRATIONS.filter((m) => m.version <= 16)) await step.up(old, { dialect: 'sqlite', now: '2026-01-01T00:00:00.000Z' })
  sqlite.run('pragma user_version = 16')
  await insertVersion16Nodes(old)
  await old.destroy()

  const db = await openStore(path)
  try {
    await expectCountsOfVersion16Nodes(db)
  } finally {
    await db.destroy()
  }
})
