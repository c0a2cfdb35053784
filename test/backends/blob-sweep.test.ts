/**
 * blobs sweep on PostgreSQL and a bucket shared by two instances: the interleavings that would lose bytes, forced.
 * S3's commit skips the transfer when the object is there already, so a writer that found an orphan stored points
 * its row at the orphan's bytes; the sweep of another instance must never delete them. Also: schema 16 from 15,
 * the bucket's probe leftovers, and `blobs check|sweep` on the command line against these backends.
 */
import { afterEach, expect, test } from 'bun:test'
import { S3Client } from 'bun'
import { sql } from 'kysely'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BlobStore } from '../../src/blobs/blob-store'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { createS3BlobStore, parseS3Url } from '../../src/blobs/s3'
import { runCli } from '../../src/cli'
import { intendBlobs } from '../../src/services/blob-intent'
import { checkBlobs, sweepBlobs } from '../../src/services/blob-sweep'
import { commitWrite } from '../../src/services/changes'
import { createStoreSearch } from '../../src/search/store-search'
import { createNodeJsonCache } from '../../src/services/node-json'
import { openStore, type Store } from '../../src/store/db'
import { PG_VERSION_TABLE } from '../../src/store/migrate'
import { MIGRATIONS } from '../../src/store/migrations'
import { openPostgres } from '../../src/store/postgres'
import { describeOnBackends, testS3Settings, testSchema } from '../support/backends'
import { capturedIo } from '../support/cli'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

const T = '2026-01-01T00:00:00.000Z'

/** Two instances: each its own connection pool and staging directory, one schema and one bucket prefix. */
async function twoInstances() {
  const schema = await testSchema()
  cleanups.push(schema.drop)
  const settings = testS3Settings()
  const instance = async () => {
    const db = await openStore(schema.url)
    const staging = mkdtempSync(join(tmpdir(), 'blobs-sweep-staging-'))
    cleanups.push(() => db.destroy())
    cleanups.push(() => rmSync(staging, { recursive: true, force: true }))
    const blobs = createS3BlobStore(settings, createDiskBlobStore(staging))
    const deps = { db, blobs, now: () => new Date(), search: createStoreSearch(db), nodeJson: createNodeJsonCache(db, '') }
    return deps
  }
  return { a: await instance(), b: await instance(), settings, url: schema.url }
}

async function orphan(blobs: BlobStore, text: string): Promise<{ sha256: string; bytes: Uint8Array<ArrayBuffer> }> {
  const bytes = new TextEncoder().encode(text)
  const staged = await blobs.stage(new Blob([bytes]).stream(), 1_000_000)
  await staged.commit()
  return { sha256: staged.sha256, bytes }
}

/** A writer's row naming the bytes (an uploaded image's: no node or version needed). */
const imageRow = (id: string, sha256: string, size: number, now: string) => ({
  id,
  caller: 'test',
  file_name: 'x.png',
  state: 'ready' as const,
  sha256,
  size_bytes: size,
  media_type: 'image/png',
  created_at: now,
  uploaded_at: now,
})

/**
 * As every writer does it: intent, commit of identical bytes (skipped: the object is there), then the row with the
 * intent dropped.
 */
async function write(deps: { db: Store; blobs: BlobStore; now(): Date }, text: string, id: string, pause?: Promise<void>) {
  const staged = await deps.blobs.stage(new Blob([new TextEncoder().encode(text)]).stream(), 1_000_000)
  const intent = await intendBlobs(deps, [staged.sha256])
  await staged.commit()
  await pause
  await commitWrite(deps as never, async (w) => {
    await intent.settle(w.db)
    await w.db
      .insertInto('staged_images')
      .values(imageRow(id, staged.sha256, staged.size, w.now))
      .execute()
  })
}

const later = () => new Date(Date.now() + 1000)

describeOnBackends('blobs sweep on PostgreSQL and a shared bucket', () => {
  test('instance B sweeps while instance A is between its commit (skipped: the orphan was there) and its row', async () => {
    const { a, b } = await twoInstances()
    const { sha256, bytes } = await orphan(a.blobs, 'orphan bytes, uploaded again')
    const { promise: gate, resolve: proceed } = Promise.withResolvers<void>()
    const { promise: commitSeen, resolve: committed } = Promise.withResolvers<void>()
    const inner = a.blobs
    const writing = write(
      {
        ...a,
        blobs: {
          ...inner,
          stage: async (body, max) => {
            const s = await inner.stage(body, max)
            return { ...s, commit: () => s.commit().then(committed) }
          },
        },
      },
      'orphan bytes, uploaded again',
      'img-1',
      commitSeen.then(() => gate),
    )
    await commitSeen
    const report = await sweepBlobs(b, { now: later(), olderThanMs: 0, dryRun: false })
    proceed()
    await writing
    expect(report.removed.count).toBe(0)
    expect(await b.blobs.has(sha256)).toBe(true)
    expect(await (await b.blobs.open(sha256))!.bytes()).toEqual(bytes)
  })

  test('instance A records its intent while B has decided the orphan is unreferenced: A waits, then stores the bytes again', async () => {
    const { a, b } = await twoInstances()
    const { sha256, bytes } = await orphan(a.blobs, 'decided first')
    let writing: Promise<void> | undefined
    let intentDone = false
    const report = await sweepBlobs(b, {
      now: later(),
      olderThanMs: 0,
      dryRun: false,
      hooks: {
        async beforeDelete(shas) {
          expect(shas).toEqual([sha256])
          writing = write(a, 'decided first', 'img-2').then(() => void (intentDone = true))
          // Long enough for A to record its intent and commit without the lock; with it, A waits for the deletion.
          await Bun.sleep(1000)
          expect(intentDone).toBe(false)
        },
      },
    })
    await writing
    expect(report.removed.count).toBe(1)
    expect(await b.blobs.has(sha256)).toBe(true) // A's commit found the object gone and sent it again
    expect(await (await b.blobs.open(sha256))!.bytes()).toEqual(bytes)
    const checked = await checkBlobs(b, { now: later(), listed: 5 })
    expect(checked).toMatchObject({ missing: { hashes: 0 }, unreferenced: { count: 0 }, stored: { count: 1 } })
  })

  test('probe objects a killed /ready left are removed once older than the grace; a dry run only counts them', async () => {
    const { b, settings } = await twoInstances()
    const { bucket, prefix } = parseS3Url(settings.url)!
    const client = new S3Client({ ...settings, bucket })
    await client.file(`${prefix}probes/left-behind`).write('ok')
    expect((await sweepBlobs(b, { now: later(), olderThanMs: 3600_000, dryRun: false })).probes).toEqual({ count: 0, bytes: 0 })
    expect((await sweepBlobs(b, { now: later(), olderThanMs: 0, dryRun: true })).probes).toEqual({ count: 1, bytes: 2 })
    expect((await sweepBlobs(b, { now: later(), olderThanMs: 0, dryRun: false })).probes).toEqual({ count: 1, bytes: 2 })
    expect(await client.file(`${prefix}probes/left-behind`).exists()).toBe(false)
  })

  test('blobs check and sweep on the command line: exit 3 while bytes are missing, 0 once clean', async () => {
    const { a, settings, url } = await twoInstances()
    const kept = await orphan(a.blobs, 'an image kept')
    await commitWrite(a as never, (w) =>
      w.db
        .insertInto('staged_images')
        .values(imageRow('img', kept.sha256, 13, T))
        .execute(),
    )
    const lost = await orphan(a.blobs, 'an image lost')
    await commitWrite(a as never, (w) =>
      w.db
        .insertInto('staged_images')
        .values(imageRow('gone', lost.sha256, 13, T))
        .execute(),
    )
    await a.blobs.delete(lost.sha256)
    const stray = await orphan(a.blobs, 'stray bytes')
    const { out, err, io } = capturedIo({
      AWS_ACCESS_KEY_ID: settings.accessKeyId!,
      AWS_SECRET_ACCESS_KEY: settings.secretAccessKey!,
      AWS_REGION: settings.region!,
    })
    const store = ['--database', url, '--storage', settings.url, '--s3-endpoint', settings.endpoint!]
    expect(await runCli(['blobs', 'check', ...store], io)).toBe(3)
    expect(err).toEqual([])
    expect(out).toContain(`unreferenced: 1 blob, 11 bytes (blobs sweep removes those older than its grace)`)
    expect(out.some((l) => l.startsWith("missing: the bytes of 0 versions' archives and 1 uploaded image"))).toBe(true)
    out.length = 0
    expect(await runCli(['blobs', 'sweep', '--older-than', '0', ...store], io)).toBe(0)
    expect(out[0]).toBe('removed 1 unreferenced blob, 11 bytes, last written more than 0 hours ago')
    expect(await a.blobs.has(stray.sha256)).toBe(false)
    expect(await a.blobs.has(kept.sha256)).toBe(true)
    await a.db.deleteFrom('staged_images').where('id', '=', 'gone').execute()
    out.length = 0
    expect(await runCli(['blobs', 'check', ...store], io)).toBe(0)
    expect(out).toContain('unreferenced: none')
  })

  test('a database at schema 15 migrates to 16: intents, and archives found by their SHA-256', async () => {
    const schema = await testSchema()
    cleanups.push(schema.drop)
    const old = openPostgres(schema.url)
    try {
      for (const step of MIGRATIONS.filter((m) => m.version <= 15)) await step.up(old.db, { dialect: 'postgres', now: T })
      const pg = old.client
      await pg`create table ${pg(PG_VERSION_TABLE)} (id integer primary key check (id = 1), version integer not null)`
      await pg`insert into ${pg(PG_VERSION_TABLE)} values (1, 15)`
      await pg`insert into staged_images (id, caller, file_name, state, sha256, created_at) values ('i', 'c', 'f', 'ready', ${'ab'.repeat(32)}, ${T})`
    } finally {
      await old.db.destroy()
    }
    const db = await openStore(schema.url)
    try {
      const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes where schemaname = current_schema()
        and indexname in ('archives_sha256', 'mirror_archives_sha256', 'blob_intents_sha256')`.execute(db)
      expect(rows.map((r) => r.indexname).sort()).toEqual(['archives_sha256', 'blob_intents_sha256', 'mirror_archives_sha256'])
      await intendBlobs({ db, now: () => new Date(T) }, ['cd'.repeat(32)])
      const checked = await db.selectFrom('blob_intents').select('sha256').execute()
      expect(checked).toEqual([{ sha256: 'cd'.repeat(32) }])
    } finally {
      await db.destroy()
    }
  })
})
