/**
 * The backends a test runs on: SQLite and disk by default; PostgreSQL and S3-compatible storage when CI's second
 * pass sets REGISTRY_MIRROR_TEST_DATABASE (a postgres:// URL) and REGISTRY_MIRROR_TEST_STORAGE (s3://bucket, with
 * REGISTRY_MIRROR_TEST_S3_ENDPOINT and the test server's credentials). Each test gets its own database schema and
 * its own key prefix, so tests stay independent and can share one server.
 */
import { SQL } from 'bun'
import { describe } from 'bun:test'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { createBlobCache } from '../../src/blobs/disk-cache'
import { createS3BlobStore, type S3Settings } from '../../src/blobs/s3'
import { join } from 'node:path'
import type { BlobStore } from '../../src/blobs/blob-store'
import { newId } from '../../src/domain/ids'
import { sql } from 'kysely'
import { dialectOf, openStore, type Store } from '../../src/store/db'

const env = process.env
export const TEST_DATABASE = env.REGISTRY_MIRROR_TEST_DATABASE
export const TEST_STORAGE = env.REGISTRY_MIRROR_TEST_STORAGE

/**
 * `describe` for the tests only PostgreSQL and S3 have (test/backends). `npm test` on a fresh machine has neither,
 * so they are skipped there with a notice; with `CI` set, or either variable set, they run (and fail without them).
 */
const backendsMissing = !TEST_DATABASE && !TEST_STORAGE && !env.CI
let noticed = false
export function describeOnBackends(name: string, suite: () => void) {
  if (backendsMissing && !noticed) {
    noticed = true
    console.warn('skipping the PostgreSQL and S3 tests (test/backends): the README says how to run them (scripts/test-backends.sh)')
  }
  describe.skipIf(backendsMissing)(name, suite)
}

/** The S3 settings of the test server, for a bucket prefix of one test. */
export function testS3Settings(prefix = `t-${newId()}`): S3Settings {
  if (!TEST_STORAGE) throw new Error('REGISTRY_MIRROR_TEST_STORAGE is not set')
  return {
    url: `${TEST_STORAGE.replace(/\/+$/, '')}/${prefix}`,
    endpoint: env.REGISTRY_MIRROR_TEST_S3_ENDPOINT,
    region: env.REGISTRY_MIRROR_TEST_S3_REGION ?? 'us-east-1',
    accessKeyId: env.REGISTRY_MIRROR_TEST_S3_ACCESS_KEY_ID ?? 'S3RVER',
    secretAccessKey: env.REGISTRY_MIRROR_TEST_S3_SECRET_ACCESS_KEY ?? 'S3RVER',
  }
}

let admin: SQL | undefined
const adminClient = () => (admin ??= new SQL({ url: TEST_DATABASE, max: 2 }))

/** A fresh, empty schema of the test database and the URL that works in it; `drop()` removes it and all it holds. */
export async function testSchema(): Promise<{ url: string; schema: string; drop(): Promise<void> }> {
  if (!TEST_DATABASE) throw new Error('REGISTRY_MIRROR_TEST_DATABASE is not set')
  const schema = `t_${newId().replace(/-/g, '')}`
  await adminClient().unsafe(`create schema ${schema}`)
  const url = new URL(TEST_DATABASE)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.toString(),
    schema,
    drop: () =>
      adminClient()
        .unsafe(`drop schema if exists ${schema} cascade`)
        .then(() => {}),
  }
}

/** A migrated store on the test's backend, and how to close and remove it. */
export async function testStore(opts: { local?: boolean } = {}): Promise<{ db: Store; location: string; close(): Promise<void> }> {
  if (!TEST_DATABASE || opts.local) {
    const db = await openStore(':memory:')
    return { db, location: ':memory:', close: () => db.destroy() }
  }
  // The next test's schema is made and migrated while this one runs: most of its cost is waiting on the server.
  const ready = (prepared ?? prepareSchema()).then((s) => s, prepareSchema)
  prepared = prepareSchema()
  prepared.catch(() => {})
  const { schema, db } = await ready
  return {
    db,
    location: schema.url,
    async close() {
      await db.destroy()
      // Dropped while the next test runs: nothing waits on it (and a throwaway test server loses nothing if it is cut short).
      void schema.drop().catch(() => {})
    },
  }
}

let prepared: Promise<{ schema: Awaited<ReturnType<typeof testSchema>>; db: Store }> | undefined

async function prepareSchema() {
  const schema = await testSchema()
  return { schema, db: await openStore(schema.url, { poolSize: 4 }) }
}

/** The test's blob store: on disk in `dir`, or under a prefix of its own in the test bucket (staging in `dir`). */
export function testBlobStore(dir: string): BlobStore {
  if (!TEST_STORAGE) return createDiskBlobStore(dir)
  // As serve makes it: downloads sent from a local copy (a small one here, so that copies come and go).
  return createS3BlobStore(testS3Settings(), createDiskBlobStore(dir), { cache: createBlobCache(join(dir, 'cache'), 8 * 1024 * 1024) })
}

const backendEnvs = new Map<string, Record<string, string>>()

/**
 * The environment that points a registry-mirror process at the test backends, one schema and bucket prefix per
 * `key` (a data directory: a server restarted on it finds its registry again); empty on SQLite and disk. Made
 * synchronously (a short child process makes the schema), as the tests' command runs are.
 */
export function backendEnv(key: string): Record<string, string> {
  if (!TEST_DATABASE && !TEST_STORAGE) return {}
  const known = backendEnvs.get(key)
  if (known) return known
  const env: Record<string, string> = {}
  const name = `e_${newId().replace(/-/g, '')}`
  if (TEST_DATABASE) {
    const made = Bun.spawnSync([
      process.execPath,
      '-e',
      `import { SQL } from 'bun'; const s = new SQL(${JSON.stringify(TEST_DATABASE)}); await s.unsafe('create schema ${name}'); await s.close()`,
    ])
    if (made.exitCode !== 0) throw new Error(`cannot make a test schema: ${made.stderr.toString()}`)
    const url = new URL(TEST_DATABASE)
    url.searchParams.set('options', `-c search_path=${name}`)
    env.REGISTRY_MIRROR_DATABASE = url.toString()
  }
  if (TEST_STORAGE) {
    const s = testS3Settings(name)
    env.REGISTRY_MIRROR_STORAGE = s.url
    if (s.endpoint) env.REGISTRY_MIRROR_S3_ENDPOINT = s.endpoint
    env.REGISTRY_MIRROR_S3_REGION = s.region!
    env.AWS_ACCESS_KEY_ID = s.accessKeyId!
    env.AWS_SECRET_ACCESS_KEY = s.secretAccessKey!
  }
  backendEnvs.set(key, env)
  return env
}

/**
 * Which of `tables` PostgreSQL has no planner statistics for (never analyzed: -1 rows) in the store's schema;
 * none on SQLite, which keeps none of its own.
 */
export async function unanalyzedTables(db: Store, tables: readonly string[]): Promise<string[]> {
  if (dialectOf(db) !== 'postgres') return []
  const rows = await sql<{ relname: string }>`
    select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind = 'r' and c.reltuples < 0 and c.relname in (${sql.join([...tables])})`.execute(db)
  return rows.rows.map((r) => r.relname).sort()
}
