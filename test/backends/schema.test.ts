/**
 * The migrations on PostgreSQL: the same tables, columns, keys, indexes and checks as on SQLite (one source, two
 * dialects); several instances starting at once on a new database migrate it once; a newer schema is refused; the
 * mirror origins recorded before schema 8 move onto their rows; nodes stored before schema 13 get their search texts.
 * Runs in CI's second pass (REGISTRY_MIRROR_TEST_DATABASE); elsewhere without it, it is skipped with a notice (in CI it fails).
 */
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { openStore } from '../../src/store/db'
import { PG_VERSION_TABLE } from '../../src/store/migrate'
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../src/store/migrations'
import { openPostgres } from '../../src/store/postgres'
import { describeOnBackends, testSchema } from '../support/backends'
import { describePostgres, describeSqlite } from '../support/neutral-schema'
import { expectSearchTextsOfVersion12Nodes, insertVersion12Nodes } from '../support/search-texts-migration'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('backend-schema')
const drops: (() => Promise<void>)[] = []
afterEach(async () => {
  dirs.cleanup()
  for (const drop of drops.splice(0)) await drop()
})

async function freshSchema() {
  const schema = await testSchema()
  drops.push(schema.drop)
  return schema
}

async function sqliteShape() {
  const path = join(dirs.make(), 'registry.db')
  await (await openStore(path)).destroy()
  return describeSqlite(new Database(path))
}

async function postgresShape(url: string) {
  const sql = new SQL(url)
  try {
    return await describePostgres(sql, [PG_VERSION_TABLE])
  } finally {
    await sql.close()
  }
}

describeOnBackends('migrations on PostgreSQL', () => {
  test('end with the same tables, columns, keys, indexes and checks as on SQLite', async () => {
    const { url } = await freshSchema()
    await (await openStore(url)).destroy()
    const pg = await postgresShape(url)
    const sqlite = await sqliteShape()
    expect(Object.keys(pg).sort()).toEqual(Object.keys(sqlite).sort())
    for (const table of Object.keys(sqlite)) expect({ table, ...pg[table] }).toEqual({ table, ...sqlite[table]! })
  })

  test('several instances starting at once on a new database migrate it once', async () => {
    const { url } = await freshSchema()
    const dir = dirs.make()
    const script = join(dir, 'open.ts')
    await Bun.write(
      script,
      `import { openStore } from ${JSON.stringify(join(import.meta.dir, '../../src/store/db'))}; await (await openStore(process.argv[2])).destroy()`,
    )
    const procs = Array.from({ length: 4 }, () => Bun.spawn([process.execPath, script, url], { stderr: 'pipe' }))
    const codes = await Promise.all(procs.map((p) => p.exited))
    const errors = await Promise.all(procs.map((p) => new Response(p.stderr).text()))
    expect({ codes, errors: errors.filter(Boolean) }).toEqual({ codes: [0, 0, 0, 0], errors: [] })
    const sql = new SQL(url)
    try {
      expect(await sql`select version from ${sql(PG_VERSION_TABLE)}`).toEqual([{ version: LATEST_SCHEMA_VERSION }])
      // One registry: the first instance made its id and the others found it.
      expect((await sql`select count(*)::int as n from registry_instance`)[0].n).toBe(1)
    } finally {
      await sql.close()
    }
    expect(await postgresShape(url)).toEqual(await sqliteShape())
  })

  test('opening again changes nothing; a newer schema is refused and left as it was', async () => {
    const { url } = await freshSchema()
    await (await openStore(url)).destroy()
    const sql = new SQL(url)
    try {
      const before = await sql`select instance_id from registry_instance`
      await (await openStore(url)).destroy()
      expect(await sql`select instance_id from registry_instance`).toEqual(before)
      await sql`update ${sql(PG_VERSION_TABLE)} set version = ${LATEST_SCHEMA_VERSION + 1}`
      await expect(openStore(url)).rejects.toThrow(/newer registry-mirror.*knows versions up to/)
      expect(await sql`select version from ${sql(PG_VERSION_TABLE)}`).toEqual([{ version: LATEST_SCHEMA_VERSION + 1 }])
    } finally {
      await sql.close()
    }
  })

  test('origins recorded at schema 7 move onto their rows; origins of rows that are gone are dropped', async () => {
    const { url } = await freshSchema()
    const old = openPostgres(url)
    const now = '2026-01-01T00:00:00.000Z'
    try {
      for (const step of MIGRATIONS.filter((m) => m.version <= 7)) await step.up(old.db, { dialect: 'postgres', now })
      const sql = old.client
      await sql`create table ${sql(PG_VERSION_TABLE)} (id integer primary key check (id = 1), version integer not null)`
      await sql`insert into ${sql(PG_VERSION_TABLE)} values (1, 7)`
      await sql`insert into mirror_sources (id, kind, created_at) values ('http://up', 'feed', ${now})`
      await sql`insert into publishers (id, name, created_at, updated_at) values ('acme', 'Acme', ${now}, ${now}), ('local', 'Local', ${now}, ${now})`
      await sql`insert into nodes (id, normalized_id, publisher_id, name, created_at, updated_at) values ('Pack', 'pack', 'local', 'Pack', ${now}, ${now})`
      await sql`insert into node_versions (id, node_id, version, created_at, updated_at) values ('v1', 'Pack', '1.0.0', ${now}, ${now})`
      await sql`insert into mirror_origins (kind, entity_id, source_id, applied_status, applied_owner, synced_at, checked_at, host_nodes_at) values
        ('publisher', 'acme', 'http://up', 'active', '', ${now}, 'mark', null),
        ('node', 'Pack', 'http://up', 'banned', 'acme', ${now}, 'mark', null),
        ('version', 'v1', 'http://up', 'active', '', ${now}, ${now}, ${now}),
        ('version', 'gone', 'http://up', 'deleted', '', ${now}, ${now}, null)`
    } finally {
      await old.db.destroy()
    }

    await (await openStore(url)).destroy()
    expect(await postgresShape(url)).toEqual(await sqliteShape())
    const sql = new SQL(url)
    try {
      expect(await sql`select id, mirror_source_id, mirror_status, mirror_checked_at from publishers order by id`).toEqual([
        { id: 'acme', mirror_source_id: 'http://up', mirror_status: 'active', mirror_checked_at: 'mark' },
        { id: 'local', mirror_source_id: null, mirror_status: '', mirror_checked_at: '' },
      ])
      expect(await sql`select id, mirror_source_id, mirror_status, mirror_checked_at, mirror_owner from nodes`).toEqual([
        { id: 'Pack', mirror_source_id: 'http://up', mirror_status: 'banned', mirror_checked_at: 'mark', mirror_owner: 'acme' },
      ])
      expect(await sql`select id, mirror_source_id, mirror_status, mirror_checked_at, mirror_host_nodes_at from node_versions`).toEqual([
        { id: 'v1', mirror_source_id: 'http://up', mirror_status: 'active', mirror_checked_at: now, mirror_host_nodes_at: now },
      ])
    } finally {
      await sql.close()
    }
  })

  test('nodes stored before version 13 get their search texts from their rows', async () => {
    const { url } = await freshSchema()
    const old = openPostgres(url)
    try {
      for (const step of MIGRATIONS.filter((m) => m.version <= 12))
        await step.up(old.db, { dialect: 'postgres', now: '2026-01-01T00:00:00.000Z' })
      const sql = old.client
      await sql`create table ${sql(PG_VERSION_TABLE)} (id integer primary key check (id = 1), version integer not null)`
      await sql`insert into ${sql(PG_VERSION_TABLE)} values (1, 12)`
      await insertVersion12Nodes(old.db)
    } finally {
      await old.db.destroy()
    }
    const db = await openStore(url)
    try {
      await expectSearchTextsOfVersion12Nodes(db)
    } finally {
      await db.destroy()
    }
  })
})
