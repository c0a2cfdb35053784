/**
 * Which PostgreSQL driver the store uses: Bun's built-in SQL client (src/store/postgres.ts, the store's driver)
 * against `pg` (node-postgres, a devDependency only for this comparison, behind Kysely's own PostgresDialect), on
 * the store's real queries through Kysely, in one run:
 * - point reads (a node by id), list reads (a page of nodes), and writes through commitWrite (the change feed's
 *   counter row included), each as operations/s with 8 concurrent callers;
 * - correctness checks the store needs: bigint counts as numbers, a transaction on one connection, LISTEN.
 * Run: bun scripts/bench/pg-driver.ts --database postgres://user@127.0.0.1:5432/db (an empty database or schema)
 */
import { SQL } from 'bun'
import { parseArgs } from 'node:util'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { commitWrite } from '../../src/services/changes'
import { migrate } from '../../src/store/migrate'
import { openPostgres } from '../../src/store/postgres'
import type { DB } from '../../src/store/schema'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { database: { type: 'string' }, seconds: { type: 'string', default: '3' } },
})
if (!values.database) throw new Error('--database postgres://... is required')
const SECONDS = Number(values.seconds)

/** The alternative: node-postgres behind Kysely's own PostgresDialect, bigint parsed to numbers as the store needs. */
function pgStore(url: string): Kysely<DB> {
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text')),
  }
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 10, types }) }) })
}

const noSearch = { nodesChanged: async () => {}, publishersChanged: async () => {} } as never
const noCache = { nodesChanged: () => {}, publishersChanged: () => {} } as never

async function rate(work: (i: number) => Promise<unknown>): Promise<number> {
  const end = performance.now() + SECONDS * 1000
  let done = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < end) await work(done++)
    }),
  )
  return done / SECONDS
}

// Each driver gets the same fresh schema: made through pg, then both connect with search_path set.
const url = new URL(values.database)
url.searchParams.set('options', '-c search_path=bench_driver')
const setup = openPostgres(values.database).db
await sql`drop schema if exists bench_driver cascade`.execute(setup)
await sql`create schema bench_driver`.execute(setup)
await setup.destroy()
const pgDb = pgStore(url.toString())
await migrate(pgDb, 'postgres')
const now = new Date().toISOString()
await pgDb.insertInto('publishers').values({ id: 'acme', name: 'Acme', created_at: now, updated_at: now }).execute()
await pgDb
  .insertInto('nodes')
  .values(
    Array.from({ length: 1000 }, (_, i) => ({
      id: `node-${i}`,
      normalized_id: `node-${i}`,
      publisher_id: 'acme',
      name: `Node ${i}`,
      created_at: now,
      updated_at: now,
    })),
  )
  .execute()
await pgDb
  .insertInto('node_downloads')
  .values(Array.from({ length: 1000 }, (_, i) => ({ node_id: `node-${i}` })))
  .execute()

const bunDb = openPostgres(url.toString()).db
const rows: Record<string, Record<string, string>> = {}
// Twice each, alternating, so that neither gains from going second (a warm server, a quieter machine).
for (const [name, db] of [
  ['pg', pgDb],
  ['Bun.SQL', bunDb],
  ['pg (again)', pgDb],
  ['Bun.SQL (again)', bunDb],
] as const) {
  const deps = { db, now: () => new Date(), search: noSearch, nodeJson: noCache }
  const point = await rate((i) =>
    db
      .selectFrom('nodes')
      .selectAll()
      .where('id', '=', `node-${i % 1000}`)
      .executeTakeFirst(),
  )
  const list = await rate((i) =>
    db
      .selectFrom('nodes')
      .selectAll()
      .orderBy('id')
      .limit(50)
      .offset((i * 50) % 950)
      .execute(),
  )
  const writes = await rate((i) =>
    commitWrite(deps, async (w) => {
      await w.db
        .updateTable('node_downloads')
        .set({ downloads: sql`downloads + 1` })
        .where('node_id', '=', `node-${i % 1000}`)
        .execute()
      w.node(`node-${i % 1000}`)
    }),
  )
  const count = await db
    .selectFrom('changes')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  rows[name] = {
    'point reads/s': point.toFixed(0),
    'page reads/s': list.toFixed(0),
    'writes/s': writes.toFixed(0),
    'count(*) type': typeof count.n,
  }
}
console.table(rows)

// LISTEN: pg has it (a dedicated Client); Bun.SQL's client is checked for a listen method.
const bunClient = new SQL({ url: url.toString() }) as unknown as Record<string, unknown>
console.log(`LISTEN/NOTIFY: pg yes (Client 'notification' events); Bun.SQL ${typeof bunClient.listen === 'function' ? 'yes' : 'no'}`)
await pgDb.destroy()
await bunDb.destroy()
