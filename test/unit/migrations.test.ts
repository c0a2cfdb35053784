import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { hashToken, UUID_PATTERN } from '../../src/domain/ids'
import { findTokenWithUser } from '../../src/store/access-tokens'
import { Kysely, SqliteDialect } from 'kysely'
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../src/store/migrations'
import { adaptBunSqlite } from '../../src/store/sqlite-adapter'
import { openStore } from '../../src/store/db'
import { fillMissingDocuments } from '../../src/services/document-fill'
import { DOCUMENT_FORMAT } from '../../src/services/node-documents'
import { describeSqlite } from '../support/neutral-schema'
import { expectSearchTextsOfVersion12Nodes, insertVersion12Nodes } from '../support/search-texts-migration'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('migrations')
afterEach(() => dirs.cleanup())

const OLD_TOKENS = ['first-release-token-1', 'first-release-token-2']

const reference = async () => {
  const db = new Database(':memory:')
  db.run(await Bun.file(join(import.meta.dir, '../../schema.sql')).text())
  return describeSqlite(db)
}

/** A data directory as the first release left it: tables made by its schema.sql, user_version 0, one of everything. */
async function firstReleaseStore(path: string) {
  const db = new Database(path)
  db.run(await Bun.file(join(import.meta.dir, '../fixtures/schema-v1.sql')).text())
  const t = '2026-01-01T00:00:00.000Z'
  db.run(`insert into users (id, email, name, created_at, updated_at) values ('alice', 'a@x', 'Alice', '${t}', '${t}')`)
  for (const token of OLD_TOKENS) {
    db.run(`insert into access_tokens (token_hash, user_id, created_at) values ('${hashToken(token)}', 'alice', '${t}')`)
  }
  db.run(`insert into publishers (id, name, created_at, updated_at) values ('acme', 'Acme', '${t}', '${t}')`)
  db.run(
    `insert into nodes (id, normalized_id, publisher_id, name, created_at, updated_at) values ('Pack', 'pack', 'acme', 'Pack', '${t}', '${t}')`,
  )
  db.run(`insert into node_versions (id, node_id, version, created_at, updated_at) values ('v1', 'Pack', '1.0.0', '${t}', '${t}')`)
  db.close()
}

/** A store file as the executable of schema `version` left it: that version's migrations, run as they ran then. */
async function storeAtVersion(version: number, now = '2026-01-01T00:00:00.000Z') {
  const path = join(dirs.make(), 'registry.db')
  const sqlite = new Database(path)
  const old = new Kysely<any>({ dialect: new SqliteDialect({ database: adaptBunSqlite(sqlite) }) })
  for (const step of MIGRATIONS.filter((m) => m.version <= version)) await step.up(old, { dialect: 'sqlite', now })
  sqlite.run(`pragma user_version = ${version}`)
  return { path, sqlite, old }
}

describe('schema migrations', () => {
  test('a new store is exactly schema.sql, at the newest version', async () => {
    const path = join(dirs.make(), 'registry.db')
    await (await openStore(path)).destroy()
    const sqlite = new Database(path)
    expect(describeSqlite(sqlite)).toEqual(await reference())
    expect(sqlite.query<{ user_version: number }, []>('pragma user_version').get()!.user_version).toBe(LATEST_SCHEMA_VERSION)
  })

  test("a store made by the first release's schema migrates to schema.sql and keeps its rows", async () => {
    const path = join(dirs.make(), 'registry.db')
    await firstReleaseStore(path)
    await (await openStore(path)).destroy()
    const sqlite = new Database(path)
    expect(describeSqlite(sqlite)).toEqual(await reference())
    expect(sqlite.query('select id from nodes').all()).toEqual([{ id: 'Pack' }])
    // Existing entities enter the change feed, so a follower starting at 0 sees them.
    expect(sqlite.query('select serial, kind, entity_id from changes order by serial').all()).toEqual([
      { serial: 1, kind: 'publisher', entity_id: 'acme' },
      { serial: 2, kind: 'node', entity_id: 'Pack' },
      { serial: 3, kind: 'version', entity_id: 'v1' },
    ])
    expect(sqlite.query('select last_serial from registry_instance').get()).toEqual({ last_serial: 3 })
  })

  test('nodes stored before version 9 get their documents from the fill, rendered as their rows are', async () => {
    const path = join(dirs.make(), 'registry.db')
    await firstReleaseStore(path)
    const db = await openStore(path)
    try {
      const documents = () => db.selectFrom('node_documents').selectAll().execute()
      expect(await documents()).toEqual([])
      expect(await fillMissingDocuments(db)).toBe(1)
      const [doc] = await documents()
      expect(doc).toMatchObject({ node_id: 'Pack', format: DOCUMENT_FORMAT, publisher_id: 'acme', download_path: '' })
      expect(JSON.parse(doc!.node_json)).toMatchObject({ id: 'Pack', name: 'Pack' })
    } finally {
      await db.destroy()
    }
  })

  test('access tokens made before they had ids get ids and keep working', async () => {
    const path = join(dirs.make(), 'registry.db')
    await firstReleaseStore(path)
    const db = await openStore(path)
    try {
      const rows = await db.selectFrom('access_tokens').selectAll().orderBy('token_hash').execute()
      expect(rows).toHaveLength(2)
      for (const row of rows) {
        expect(row).toMatchObject({ user_id: 'alice', token_prefix: '', expires_at: null, last_used_at: null, revoked_at: null })
        expect(row.id).toMatch(UUID_PATTERN)
      }
      expect(rows[0]!.id).not.toBe(rows[1]!.id)
      for (const token of OLD_TOKENS) expect((await findTokenWithUser(db, hashToken(token)))?.user.id).toBe('alice')
    } finally {
      await db.destroy()
    }
  })

  test('origins recorded before schema 8 move onto their rows; origins of rows that are gone are dropped', async () => {
    const now = '2026-01-01T00:00:00.000Z'
    const { path, sqlite, old } = await storeAtVersion(6, now)
    const insert = (sql: string) => sqlite.run(sql.replaceAll('$t', now))
    insert(`insert into mirror_sources (id, kind, created_at) values ('http://up', 'feed', '$t')`)
    insert(`insert into publishers (id, name, created_at, updated_at) values ('acme', 'Acme', '$t', '$t'), ('local', 'Local', '$t', '$t')`)
    insert(
      `insert into nodes (id, normalized_id, publisher_id, name, created_at, updated_at) values ('Pack', 'pack', 'local', 'Pack', '$t', '$t')`,
    )
    insert(`insert into node_versions (id, node_id, version, created_at, updated_at) values ('v1', 'Pack', '1.0.0', '$t', '$t')`)
    insert(`insert into mirror_origins (kind, entity_id, source_id, applied_status, applied_owner, synced_at, checked_at, host_nodes_at) values
      ('publisher', 'acme', 'http://up', 'active', '', '$t', 'mark', null),
      ('node', 'Pack', 'http://up', 'banned', 'acme', '$t', 'mark', null),
      ('version', 'v1', 'http://up', 'active', '', '$t', '$t', '$t'),
      ('version', 'gone', 'http://up', 'deleted', '', '$t', '$t', null)`)
    await old.destroy()

    await (await openStore(path)).destroy()
    const db = new Database(path)
    expect(describeSqlite(db)).toEqual(await reference())
    const columns = 'id, mirror_source_id, mirror_status, mirror_checked_at'
    expect(db.query(`select ${columns} from publishers order by id`).all()).toEqual([
      { id: 'acme', mirror_source_id: 'http://up', mirror_status: 'active', mirror_checked_at: 'mark' },
      { id: 'local', mirror_source_id: null, mirror_status: '', mirror_checked_at: '' },
    ])
    expect(db.query(`select ${columns}, mirror_owner from nodes`).all()).toEqual([
      { id: 'Pack', mirror_source_id: 'http://up', mirror_status: 'banned', mirror_checked_at: 'mark', mirror_owner: 'acme' },
    ])
    expect(db.query(`select ${columns}, mirror_host_nodes_at from node_versions`).all()).toEqual([
      { id: 'v1', mirror_source_id: 'http://up', mirror_status: 'active', mirror_checked_at: now, mirror_host_nodes_at: now },
    ])
  })

  test('nodes stored before version 13 get their search texts from their rows', async () => {
    const { path, old } = await storeAtVersion(12)
    await insertVersion12Nodes(old)
    await old.destroy()
    const db = await openStore(path)
    try {
      await expectSearchTextsOfVersion12Nodes(db)
    } finally {
      await db.destroy()
    }
  })

  test('memberships made before version 14 get UUIDs of their own', async () => {
    const t = '2026-01-01T00:00:00.000Z'
    const { path, sqlite, old } = await storeAtVersion(13, t)
    sqlite.run(
      `insert into users (id, email, name, created_at, updated_at) values ('alice', 'a@x', 'A', '${t}', '${t}'), ('bob', 'b@x', 'B', '${t}', '${t}')`,
    )
    sqlite.run(`insert into publishers (id, name, created_at, updated_at) values ('acme', 'Acme', '${t}', '${t}')`)
    sqlite.run(
      `insert into publisher_members (publisher_id, user_id, role, created_at) values ('acme', 'alice', 'owner', '${t}'), ('acme', 'bob', 'member', '${t}')`,
    )
    await old.destroy()
    await (await openStore(path)).destroy()
    const db = new Database(path)
    expect(describeSqlite(db)).toEqual(await reference())
    const members = db
      .query<{ id: string; user_id: string; role: string }, []>('select id, user_id, role from publisher_members order by user_id')
      .all()
    expect(members).toEqual([
      { id: expect.stringMatching(UUID_PATTERN), user_id: 'alice', role: 'owner' },
      { id: expect.stringMatching(UUID_PATTERN), user_id: 'bob', role: 'member' },
    ])
    expect(members[0]!.id).not.toBe(members[1]!.id)
    db.close()
  })

  test('review totals left wrong by reviews sent at once are computed again from the reviews (version 15)', async () => {
    const t = '2026-01-01T00:00:00.000Z'
    const { path, sqlite, old } = await storeAtVersion(14, t)
    sqlite.run(`insert into publishers (id, name, created_at, updated_at) values ('acme', 'Acme', '${t}', '${t}')`)
    const node = (id: string, total: number, count: number) =>
      sqlite.run(
        `insert into nodes (id, normalized_id, publisher_id, name, star_total, review_count, created_at, updated_at) values ('${id}', '${id}', 'acme', '${id}', ${total}, ${count}, '${t}', '${t}')`,
      )
    node('wrong', 14, 1) // one review of 3 stored; the totals moved from one starting point
    node('right', 7, 2)
    node('none', 0, 0)
    sqlite.run(`insert into reviews (node_id, reviewer, star, created_at, updated_at) values
      ('wrong', 'user:a', 3, '${t}', '${t}'), ('right', 'user:a', 3, '${t}', '${t}'), ('right', 'user:b', 4, '${t}', '${t}')`)
    for (const id of ['wrong', 'right'])
      sqlite.run(`insert into node_documents (node_id, node_json, publisher_id, format) values ('${id}', '{}', 'acme', 1)`)
    await old.destroy()
    await (await openStore(path)).destroy()
    const db = new Database(path)
    expect(db.query('select id, star_total, review_count from nodes order by id').all()).toEqual([
      { id: 'none', star_total: 0, review_count: 0 },
      { id: 'right', star_total: 7, review_count: 2 },
      { id: 'wrong', star_total: 3, review_count: 1 },
    ])
    // The wrong one's document showed the wrong rating: dropped, to be written again from its row; and followers hear of it.
    expect(db.query('select node_id from node_documents').all()).toEqual([{ node_id: 'right' }])
    const last = (db.query('select last_serial from registry_instance').get() as { last_serial: number }).last_serial
    expect(db.query("select serial, entity_id from changes where kind = 'node' order by serial desc limit 1").get()).toEqual({
      serial: last,
      entity_id: 'wrong',
    })
    db.close()
  })

  test('opening again changes nothing', async () => {
    const path = join(dirs.make(), 'registry.db')
    await (await openStore(path)).destroy()
    const before = new Database(path).query('select instance_id from registry_instance').get()
    await (await openStore(path)).destroy()
    expect(new Database(path).query('select instance_id from registry_instance').get()).toEqual(before)
  })

  test('a store written by a newer executable is refused with a clear message and left untouched', async () => {
    const path = join(dirs.make(), 'registry.db')
    await (await openStore(path)).destroy()
    new Database(path).run(`pragma user_version = ${LATEST_SCHEMA_VERSION + 1}`)
    await expect(openStore(path)).rejects.toThrow(/newer registry-mirror.*knows versions up to/)
    expect(new Database(path).query<{ user_version: number }, []>('pragma user_version').get()!.user_version).toBe(
      LATEST_SCHEMA_VERSION + 1,
    )
  })

  test('several processes opening one new store at once migrate it once', async () => {
    const dir = dirs.make()
    const script = `import { openStore } from ${JSON.stringify(join(import.meta.dir, '../../src/store/db'))}; await (await openStore(process.argv[2])).destroy()`
    const file = join(dir, 'open.ts')
    await Bun.write(file, script)
    const path = join(dir, 'registry.db')
    const procs = Array.from({ length: 4 }, () => Bun.spawn([process.execPath, file, path], { stderr: 'pipe' }))
    const codes = await Promise.all(procs.map((p) => p.exited))
    const errors = await Promise.all(procs.map((p) => new Response(p.stderr).text()))
    expect({ codes, errors: errors.filter(Boolean) }).toEqual({ codes: [0, 0, 0, 0], errors: [] })
    expect(describeSqlite(new Database(path))).toEqual(await reference())
  })

  test('a new store whose write lock another process holds for a moment is waited for, and turned to WAL', async () => {
    const dir = dirs.make()
    const path = join(dir, 'registry.db')
    // Another process midway through creating the same store: the file exists, not yet WAL, its write lock held.
    const holder = Bun.spawn(
      [
        process.execPath,
        '-e',
        `const { Database } = require('bun:sqlite'); const db = new Database(process.argv[1], { create: true });
         db.run('begin immediate'); console.log('held'); Bun.sleepSync(300); db.run('rollback'); db.close()`,
        path,
      ],
      { stdout: 'pipe' },
    )
    const reader = holder.stdout.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('held\n')
    const started = performance.now()
    const db = await openStore(path)
    expect(performance.now() - started).toBeGreaterThan(100)
    await db.destroy()
    expect(await holder.exited).toBe(0)
    expect(new Database(path).query('pragma journal_mode').get()).toEqual({ journal_mode: 'wal' })
  })

  test('the data file is readable by its owner only', async () => {
    const path = join(dirs.make(), 'registry.db')
    await (await openStore(path)).destroy()
    expect((await Bun.file(path).stat()).mode & 0o777).toBe(0o600)
  })
})
