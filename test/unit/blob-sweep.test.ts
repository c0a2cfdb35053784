/**
 * blobs check and sweep on the test's backends (SQLite and disk; PostgreSQL and S3 in CI's second pass): what is
 * found and removed, and the race the sweep must never lose, forced: an upload of bytes identical to an orphan
 * between its commit of the bytes and its row, while the sweep has decided the orphan is unreferenced.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import type { BlobStore, StagedBlob } from '../../src/blobs/blob-store'
import { intendBlobs } from '../../src/services/blob-intent'
import { checkBlobs, sweepBlobs } from '../../src/services/blob-sweep'
import { commitWrite } from '../../src/services/changes'
import { sweepStagedImages } from '../../src/services/staged-images'
import { INTENT_TTL_MS } from '../../src/store/blob-intents'
import { neededHashes } from '../../src/store/blob-references'
import { aliceWithPublisher, makeTestApp, publish, publishActive, upload, type TestApp } from '../support/app'
import { makeZip, samplePack } from '../support/archives'
import { tempDirs } from '../support/tmp'
import { join } from 'node:path'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { createStoreSearch } from '../../src/search/store-search'
import { createNodeJsonCache } from '../../src/services/node-json'
import { openStore } from '../../src/store/db'

let t: TestApp
afterEach(async () => {
  await t?.cleanup()
})

const HOUR = 3600_000
const sha256Of = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
const later = (ms: number) => new Date(Date.now() + ms)

async function app() {
  t = await makeTestApp()
  // Intents and blobs are dated by this clock and by the store's own (a file's mtime, an object's LastModified).
  t.clock.now = new Date()
  return { ...(await aliceWithPublisher(t)), deps: t.deps }
}

/** Bytes stored with no row: what a refused upload or a process killed before its row leaves. */
async function orphan(blobs: BlobStore, bytes: Uint8Array): Promise<string> {
  const staged = await blobs.stage(new Blob([bytes]).stream(), 10_000_000)
  await staged.commit()
  return staged.sha256
}

const zip = (name: string) => makeZip(samplePack([{ name: `${name}.py`, data: `# ${name}\n` }]))

describe('blobs check and sweep', () => {
  test('check counts unreferenced blobs and their bytes; sweep removes the old ones only, and --dry-run none', async () => {
    const { pat, deps } = await app()
    const kept = zip('kept')
    await publishActive(t, { pat, node: 'kept', version: '1.0.0', bytes: kept })
    const bytes = zip('orphan')
    const sha = await orphan(deps.blobs, bytes)

    const checked = await checkBlobs(deps, { now: later(1000), listed: 10 })
    expect(checked.stored.count).toBe(2)
    expect(checked.missing.hashes).toBe(0)
    expect(checked.unreferenced).toMatchObject({ count: 1, bytes: bytes.length })
    expect(checked.unreferenced.first.map((b) => b.sha256)).toEqual([sha])

    const young = await sweepBlobs(deps, { now: later(1000), olderThanMs: 24 * HOUR, dryRun: false })
    expect(young.removed).toEqual({ count: 0, bytes: 0 })
    expect(young.young).toEqual({ count: 1, bytes: bytes.length })
    const dry = await sweepBlobs(deps, { now: later(1000), olderThanMs: 0, dryRun: true })
    expect(dry.removed).toEqual({ count: 1, bytes: bytes.length })
    expect(await deps.blobs.has(sha)).toBe(true)

    const swept = await sweepBlobs(deps, { now: later(1000), olderThanMs: 0, dryRun: false })
    expect(swept.removed).toEqual({ count: 1, bytes: bytes.length })
    expect(await deps.blobs.has(sha)).toBe(false)
    const after = await checkBlobs(deps, { now: later(1000), listed: 10 })
    expect(after).toMatchObject({ stored: { count: 1 }, unreferenced: { count: 0 }, missing: { hashes: 0 } })
    expect(await deps.blobs.has(sha256Of(kept))).toBe(true)
  })

  test('check lists the versions whose archive bytes are gone (bytes shared by two versions count twice)', async () => {
    const { pat, deps } = await app()
    const shared = zip('shared')
    await publishActive(t, { pat, node: 'one', version: '1.0.0', bytes: shared })
    await publishActive(t, { pat, node: 'two', version: '2.0.0', bytes: shared })
    await publishActive(t, { pat, node: 'three', version: '3.0.0', bytes: zip('three') })
    await deps.blobs.delete(sha256Of(shared))

    const report = await checkBlobs(deps, { now: later(1000), listed: 1 })
    expect(report.missing).toMatchObject({ hashes: 1, archives: 2, images: 0 })
    expect(report.missing.first).toEqual([{ sha256: sha256Of(shared), version: 'one@1.0.0 (active)' }])
    expect(report.unreferenced.count).toBe(0)
    // A sweep never touches what rows need, and has nothing to say about bytes that are gone.
    expect((await sweepBlobs(deps, { now: later(1000), olderThanMs: 0, dryRun: false })).removed.count).toBe(0)
  })

  test('an upload of the bytes of an orphan, between its commit and its row while the sweep decides: the bytes stay', async () => {
    const { pat, deps } = await app()
    const bytes = zip('raced')
    const sha = await orphan(deps.blobs, bytes)
    const published = await publish(t, { pat, node: 'raced', version: '1.0.0' })
    expect(published.status).toBe(201)

    // The writer's commit is seen: without the intent and the lock, it lands while the sweep holds its decision.
    const { promise: commitSeen, resolve: committed } = Promise.withResolvers<void>()
    const inner = deps.blobs
    deps.blobs = {
      ...inner,
      async stage(body, max): Promise<StagedBlob> {
        const staged = await inner.stage(body, max)
        return { ...staged, commit: () => staged.commit().then(committed) }
      },
    }
    let uploading: Promise<{ status: number }> | undefined
    const report = await sweepBlobs(
      { db: deps.db, blobs: inner },
      {
        now: later(1000),
        olderThanMs: 0,
        dryRun: false,
        hooks: {
          async beforeDelete(shas) {
            expect(shas).toEqual([sha])
            uploading = upload(t, published.body.signedUrl, bytes)
            // Until the writer has committed its bytes, or long enough that it would have without the lock.
            await Promise.race([commitSeen, Bun.sleep(1000)])
          },
        },
      },
    )
    expect(report.removed.count).toBe(1) // the orphan, deleted before the writer's intent could be recorded
    expect((await uploading!).status).toBe(200)
    expect(await inner.has(sha)).toBe(true) // stored again by the writer's commit
    expect(await (await inner.open(sha))!.bytes()).toEqual(bytes)
    const after = await checkBlobs({ db: deps.db, blobs: inner }, { now: later(1000), listed: 10 })
    expect(after).toMatchObject({ missing: { hashes: 0 }, unreferenced: { count: 0 } })
  })

  test('a sweep while an upload of the bytes of an orphan is between its commit and its row: the bytes stay', async () => {
    const { pat, deps } = await app()
    const bytes = zip('paused')
    const sha = await orphan(deps.blobs, bytes)
    const published = await publish(t, { pat, node: 'paused', version: '1.0.0' })
    // The writer stops right after its commit (on S3 it found the orphan stored and skipped the transfer).
    const { promise: commitSeen, resolve: committed } = Promise.withResolvers<void>()
    const { promise: gate, resolve: proceed } = Promise.withResolvers<void>()
    const inner = deps.blobs
    deps.blobs = {
      ...inner,
      async stage(body, max): Promise<StagedBlob> {
        const staged = await inner.stage(body, max)
        return { ...staged, commit: () => staged.commit().then(() => (committed(), gate)) }
      },
    }
    const uploading = upload(t, published.body.signedUrl, bytes)
    await commitSeen
    const report = await sweepBlobs({ db: deps.db, blobs: inner }, { now: later(1000), olderThanMs: 0, dryRun: false })
    proceed()
    expect((await uploading).status).toBe(200)
    expect(report.removed.count).toBe(0)
    expect(await inner.has(sha)).toBe(true)
    const after = await checkBlobs({ db: deps.db, blobs: inner }, { now: later(1000), listed: 10 })
    expect(after).toMatchObject({ missing: { hashes: 0 }, unreferenced: { count: 0 } })
  })

  test('bytes under a live intent are kept however old; an expired intent is dropped and its row refused', async () => {
    const { deps } = await app()
    const sha = await orphan(deps.blobs, zip('held'))
    const intent = await intendBlobs(deps, [sha])
    const kept = await sweepBlobs(deps, { now: later(1000), olderThanMs: 0, dryRun: false })
    expect(kept.removed.count).toBe(0)
    expect(await deps.blobs.has(sha)).toBe(true)

    // A day on, the writer is taken for dead: its intent goes, then its bytes; its row would point at nothing.
    const swept = await sweepBlobs(deps, { now: later(INTENT_TTL_MS + HOUR), olderThanMs: 0, dryRun: false })
    expect(swept.intentsExpired).toBe(1)
    expect(swept.removed.count).toBe(1)
    const write = commitWrite(deps, (w) => intent.settle(w.db))
    await expect(write).rejects.toMatchObject({ status: 503 })
  })

  test('more blobs than a batch: every one is looked up and counted', async () => {
    const { deps } = await app()
    const shas: string[] = []
    for (let i = 0; i < 620; i++) shas.push(await orphan(deps.blobs, new TextEncoder().encode(`blob ${i}`)))
    const report = await checkBlobs(deps, { now: later(1000), listed: 3 })
    expect(report.unreferenced.count).toBe(620)
    expect(report.unreferenced.first.map((b) => b.sha256)).toEqual(shas.sort().slice(0, 3))
    const swept = await sweepBlobs(deps, { now: later(1000), olderThanMs: 0, dryRun: false })
    expect(swept.removed.count).toBe(620)
  }, 60_000)

  test('the hashes rows need come in byte order, a page at a time', async () => {
    const { pat } = await app()
    const hashes: string[] = []
    for (const name of ['a', 'b', 'c', 'd', 'e']) {
      const bytes = zip(name)
      hashes.push(sha256Of(bytes))
      await publishActive(t, { pat, node: `n-${name}`, version: '1.0.0', bytes })
    }
    const seen: string[] = []
    for await (const sha of neededHashes(t.deps.db, later(1000).toISOString(), 2)) seen.push(sha)
    expect(seen).toEqual(hashes.sort())
  })
})

describe('blobs sweep from another process on the same SQLite file (the command beside a server)', () => {
  const dirs = tempDirs('blob-sweep-sqlite')
  afterEach(() => dirs.cleanup())

  test('a writer recording its intent while the sweep has decided waits for the deletion, then stores the bytes again', async () => {
    const dir = dirs.make()
    const server = await openStore(join(dir, 'registry.db'))
    const command = await openStore(join(dir, 'registry.db'))
    try {
      const blobs = createDiskBlobStore(dir)
      const writerDeps = {
        db: server,
        blobs,
        now: () => new Date(),
        search: createStoreSearch(server),
        nodeJson: createNodeJsonCache(server, ''),
      }
      const bytes = zip('other process')
      const sha = await orphan(blobs, bytes)
      let writing: Promise<void> | undefined
      let intentRecorded = false
      const report = await sweepBlobs(
        { db: command, blobs },
        {
          now: later(1000),
          olderThanMs: 0,
          dryRun: false,
          hooks: {
            async beforeDelete() {
              writing = (async () => {
                const staged = await blobs.stage(new Blob([bytes]).stream(), 1_000_000)
                const intent = await intendBlobs(writerDeps, [staged.sha256])
                intentRecorded = true
                await staged.commit()
                await commitWrite(writerDeps, async (w) => {
                  await intent.settle(w.db)
                  await w.db
                    .insertInto('staged_images')
                    .values({ id: 'i', caller: 'c', file_name: 'f', state: 'ready', sha256: sha, created_at: w.now, uploaded_at: w.now })
                    .execute()
                })
              })()
              await Bun.sleep(1000)
              expect(intentRecorded).toBe(false) // the command's transaction holds the file's write lock
            },
          },
        },
      )
      await writing
      expect(report.removed.count).toBe(1)
      expect(await blobs.has(sha)).toBe(true)
      expect((await checkBlobs({ db: command, blobs }, { now: later(1000), listed: 1 })).unreferenced.count).toBe(0)
    } finally {
      await command.destroy()
      await server.destroy()
    }
  })
})

describe('the staged-image sweep (hourly, in serve)', () => {
  test('bytes of an expired image are kept while an upload of the same image is between its commit and its row', async () => {
    const { deps } = await app()
    const bytes = zip('image')
    const sha = await orphan(deps.blobs, bytes)
    const old = new Date(Date.now() - 2 * 24 * HOUR).toISOString()
    const row = (id: string, at: string) => ({
      id,
      caller: 'c',
      file_name: 'f.png',
      state: 'ready' as const,
      sha256: sha,
      created_at: at,
      uploaded_at: at,
    })
    await deps.db.insertInto('staged_images').values(row('expired', old)).execute()
    // Another caller's upload of the same image has committed its bytes (found stored) and not yet written its row.
    const intent = await intendBlobs(deps, [sha])
    expect(await sweepStagedImages(deps)).toBe(1)
    expect(await deps.blobs.has(sha)).toBe(true)
    await commitWrite(deps, async (w) => {
      await intent.settle(w.db)
      await w.db.insertInto('staged_images').values(row('fresh', w.now)).execute()
    })
    expect((await checkBlobs(deps, { now: later(1000), listed: 1 })).missing.hashes).toBe(0)
  })
})
