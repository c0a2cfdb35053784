/**
 * Schema 17 on PostgreSQL, from a store at version 16 with counts (test/support/node-downloads-migration.ts says what).
 * Runs in CI's second pass (REGISTRY_MIRROR_TEST_DATABASE); elsewhere it is skipped with a notice.
 */
import { afterEach, test } from 'bun:test'
import { openStore } from '../../src/store/db'
import { PG_VERSION_TABLE } from '../../src/store/migrate'
import { MIGRATIONS } from '../../src/store/migrations'
import { openPostgres } from '../../src/store/postgres'
import { describeOnBackends, testSchema } from '../support/backends'
import { expectCountsOfVersion16Nodes, insertVersion16Nodes } from '../support/node-downloads-migration'

const drops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const drop of drops.splice(0)) await drop()
})

describeOnBackends('schema 17 on PostgreSQL', () => {
  test('a store at version 16 moves its counts into narrow rows; every reader and the feed go on from them', async () => {
    const { url, drop } = await testSchema()
    drops.push(drop)
    const old = openPostgres(url)
    try {
      for (const step of MIGRATIONS.filter((m) => m.version <= 16))
        await step.up(old.db, { dialect: 'postgres', now: '2026-01-01T00:00:00.000Z' })
      const sql = old.client
      await sql`create table ${sql(PG_VERSION_TABLE)} (id integer primary key check (id = 1), version integer not null)`
      await sql`insert into ${sql(PG_VERSION_TABLE)} values (1, 16)`
      await insertVersion16Nodes(old.db)
    } finally {
      await old.db.destroy()
    }
    const db = await openStore(url)
    try {
      await expectCountsOfVersion16Nodes(db)
    } finally {
      await db.destroy()
    }
  })
})
