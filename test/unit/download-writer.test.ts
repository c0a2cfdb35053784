/**
 * The download writer thread: a SQLite store's batches of counts are written by another connection in another
 * thread, taking turns with this process's writes, and its feed entries are known as this process's own.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { commitWrite } from '../../src/services/changes'
import { fillMissingDocuments } from '../../src/services/document-fill'
import { createDownloadCounter } from '../../src/services/downloads'
import { createNodeJsonCache } from '../../src/services/node-json'
import { followStore } from '../../src/services/store-follower'
import { listChanges } from '../../src/store/changes'
import { openStore, type Store } from '../../src/store/db'
import { startDownloadWriter, type DownloadWriter } from '../../src/store/download-writer'
import { seedNodes } from '../support/seed'
import { appendPlus, settled } from '../support/writes'
import { tempDirs } from '../support/tmp'
import { namesTable, watchQueries } from '../support/watch-queries'

const dirs = tempDirs('download-writer')
const opened: { db: Store; writer?: DownloadWriter }[] = []
afterEach(async () => {
  for (const { db, writer } of opened.splice(0)) {
    await writer?.stop()
    await db.destroy()
  }
  dirs.cleanup()
})

/** A handle on `db` that counts the updates of the nodes' counts sent through it (this process's own handle). */
function watchNodeWrites(db: Store) {
  const seen = { updates: 0 }
  const store = watchQueries(db, (query) => {
    if (query.kind === 'UpdateQueryNode' && namesTable(query, 'node_downloads')) seen.updates++
  })
  return { seen, store }
}

/**
 * `writer`, whose batches, once committed, are answered only when release() is called: the batch is in the store,
 * its feed serials not yet known as this process's own, and its write turn not over.
 */
function held(writer: DownloadWriter) {
  const { promise: released, resolve: release } = Promise.withResolvers<void>()
  const { promise: inStore, resolve: committed } = Promise.withResolvers<void>()
  const gated: DownloadWriter = {
    async write(counts, now) {
      const written = await writer.write(counts, now)
      committed()
      await released
      return written
    },
    stop: () => writer.stop(),
  }
  return { gated, inStore, release }
}

/** A store file with nodes a and b, its index and caches, and a counter writing through `writerPath` (the file, or not). */
async function world(writerPath?: (file: string) => string) {
  const path = join(dirs.make(), 'registry.db')
  const base = await openStore(path)
  await seedNodes(base, [
    { id: 'a', description: 'sprocket', downloads: 5 },
    { id: 'b', description: 'flywheel', downloads: 7 },
  ])
  const { seen, store: db } = watchNodeWrites(base)
  const writer = startDownloadWriter(db, writerPath ? writerPath(path) : path)
  opened.push({ db: base, writer })
  const search = createIndexedSearch(db, silentLog)
  await search.warm()
  const nodeJson = createNodeJsonCache(db, 'http://x')
  const deps = { db, search, nodeJson, log: silentLog, now: () => new Date('2026-01-01T00:00:00Z') }
  const counter = createDownloadCounter(deps, writer)
  const stored = async (id: string) =>
    (await base.selectFrom('node_downloads').select('downloads').where('node_id', '=', id).executeTakeFirstOrThrow()).downloads
  const served = async (id: string) => JSON.parse((await nodeJson.render([id]))[0]!).downloads as number
  return { path, base, db, deps, seen, writer, counter, search, nodeJson, stored, served }
}

describe('the download writer thread', () => {
  test("writes a batch on its own connection: this process's handle runs no update, and the index, caches and feed follow", async () => {
    const { base, seen, counter, search, stored, served } = await world()
    expect(await served('a')).toBe(5)
    const serial = (await listChanges(base, 0, 1000)).at(-1)?.serial ?? 0
    for (let i = 0; i < 3; i++) counter.count('a')
    counter.count('b')
    counter.count('ghost') // gone since: dropped
    await counter.flush()
    expect(counter.pending).toBe(0)
    expect(seen.updates).toBe(0)
    expect([await stored('a'), await stored('b')]).toEqual([8, 8])
    expect([await served('a'), await served('b')]).toEqual([8, 8])
    expect((await search.find({ includeBanned: false, offset: 0, limit: 10 })).ids).toEqual(['a', 'b'])
    const fed = await listChanges(base, serial, 100)
    expect(fed.map((c) => `${c.kind}:${c.entity_id}`).sort()).toEqual(['node:a', 'node:b'])
  })

  test("its feed entries are this process's own: the store's follower does not apply them again", async () => {
    const { deps, counter, nodeJson, served } = await world()
    const follower = await followStore(deps, 60_000)
    follower.stop()
    expect(await served('a')).toBe(5)
    counter.count('a')
    await counter.flush()
    const before = nodeJson.sequence
    await follower.poll()
    expect(nodeJson.sequence).toBe(before) // nothing applied: the rendered node is kept
    expect(await served('a')).toBe(6)
  })

  test("this process's writes that read before they write take turns with the thread's batches: none fails", async () => {
    const { counter, deps, stored } = await world()
    const writes: Promise<string | undefined>[] = []
    const flushes: Promise<void>[] = []
    for (let i = 0; i < 40; i++) {
      counter.count('a')
      flushes.push(counter.flush())
      writes.push(appendPlus(deps, 'b', 1)) // the thread's batch would commit in its pause, were it not waiting its turn
    }
    const failures = (await Promise.all(writes)).filter((why) => why !== undefined)
    await Promise.all(flushes)
    expect(failures).toEqual([])
    expect(counter.pending).toBe(0)
    expect(await stored('a')).toBe(45)
    const b = await deps.db.selectFrom('nodes').select('description').where('id', '=', 'b').executeTakeFirstOrThrow()
    expect(b.description).toBe(`flywheel${'+'.repeat(40)}`)
  })

  test('a thread that cannot open the store fails its batch, which is kept; later batches are written on this handle', async () => {
    // A directory is no database: the thread fails at its start.
    const { counter, seen, stored } = await world((file) => join(file, '..'))
    counter.count('a')
    counter.count('a')
    await counter.flush()
    for (let i = 0; i < 100 && counter.pending; i++) {
      await Bun.sleep(5)
      await counter.flush()
    }
    expect(counter.pending).toBe(0)
    expect(await stored('a')).toBe(7)
    expect(seen.updates).toBeGreaterThan(0) // on this process's handle
  })

  test("the store's follower reads the feed in a turn: a batch committed but not yet answered is not taken for another process's", async () => {
    const { deps, writer, nodeJson, served } = await world()
    const { gated, inStore, release } = held(writer)
    const counter = createDownloadCounter(deps, gated)
    const follower = await followStore(deps, 60_000)
    follower.stop()
    expect(await served('a')).toBe(5)
    counter.count('a')
    const flushed = counter.flush()
    await inStore
    const before = nodeJson.sequence
    const polled = follower.poll()
    await settled() // a follower reading outside the turn has read the batch's entries by now
    release()
    await Promise.all([flushed, polled])
    expect(nodeJson.contentChangedAfter('a', before)).toBe(false) // its count taken, not applied as a change
    expect(await served('a')).toBe(6)
  })

  test("this process's writes wait on a promise while a batch is in hand: the event loop is not held waiting for the lock", async () => {
    const { deps, writer } = await world()
    const { gated, inStore, release } = held(writer)
    const counter = createDownloadCounter(deps, gated)
    counter.count('a')
    const flushed = counter.flush()
    await inStore
    let began = false
    const write = commitWrite(deps, async (w) => {
      began = true
      await w.db.updateTable('nodes').set({ description: 'gearbox' }).where('id', '=', 'b').execute()
      w.node('b')
    })
    await settled()
    expect(began).toBe(false)
    release()
    await write
    await flushed
    expect(began).toBe(true)
  })

  test('the document fill writes in a turn: not while a batch is in hand', async () => {
    const { deps, base, writer } = await world()
    const documents = async () => (await base.selectFrom('node_documents').select('node_id').execute()).length
    const { gated, inStore, release } = held(writer)
    const counter = createDownloadCounter(deps, gated)
    counter.count('a')
    const flushed = counter.flush()
    await inStore
    const filled = fillMissingDocuments(deps.db)
    await settled()
    expect(await documents()).toBe(0)
    release()
    expect(await filled).toBe(2)
    await flushed
    expect(await documents()).toBe(2)
  })

  test('stop() twice, or twice at once, ends every call', async () => {
    const { writer, counter, stored } = await world()
    counter.count('a')
    await counter.flush()
    await Promise.all([writer.stop(), writer.stop()])
    await writer.stop()
    expect(await stored('a')).toBe(6)
  })

  test('a batch in hand keeps the process alive until it is written, and then the thread does not', async () => {
    const dir = dirs.make()
    const path = join(dir, 'registry.db')
    const db = await openStore(path)
    await seedNodes(db, [{ id: 'a', downloads: 5 }])
    await db.destroy()
    // Nothing else keeps this process alive: no stop(), no timer, no server.
    const script = [
      `import { openStore } from ${JSON.stringify(join(import.meta.dir, '../../src/store/db'))}`,
      `import { startDownloadWriter } from ${JSON.stringify(join(import.meta.dir, '../../src/store/download-writer'))}`,
      `const db = await openStore(process.argv[2])`,
      `const writer = startDownloadWriter(db, process.argv[2])`,
      `void writer.write(new Map([['a', 1]]), '2026-01-01T00:00:00.000Z').then((w) => console.log(JSON.stringify([...w.totals])))`,
    ].join('\n')
    const file = join(dir, 'write.ts')
    await Bun.write(file, script)
    // A thread that kept the process alive after its batch is ended here (the test then fails on its exit code).
    const proc = Bun.spawn([process.execPath, file, path], { stdout: 'pipe', stderr: 'pipe', timeout: 10_000 })
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    expect({ code, out, err }).toEqual({ code: 0, out: '[["a",6]]\n', err: '' })
  }, 15_000)

  test("leaves the log's copy to the checkpoint thread: its commits do not copy it at SQLite's 1,000 pages", async () => {
    const path = join(dirs.make(), 'registry.db')
    const db = await openStore(path)
    const ids = Array.from({ length: 3000 }, (_, i) => `node-${String(i).padStart(4, '0')}`)
    await seedNodes(
      db,
      ids.map((id) => ({ id })),
    )
    const writer = startDownloadWriter(db, path)
    opened.push({ db, writer })
    await sql`pragma wal_checkpoint(truncate)`.execute(db)
    const { page_size } = (await sql<{ page_size: number }>`pragma page_size`.execute(db)).rows[0]!
    // A log that is copied is written again from its start: its file stops growing. The log of one batch of every
    // node, copied nowhere, grows by as much at each batch.
    const frames = () => (statSync(`${path}-wal`).size - 32) / (page_size + 24)
    await writer.write(new Map(ids.map((id) => [id, 1])), '2026-01-01T00:00:00.000Z')
    const batch = frames()
    for (let i = 0; i < Math.ceil(1000 / batch) + 2; i++) await writer.write(new Map(ids.map((id) => [id, 1])), '2026-01-01T00:00:00.000Z')
    expect(frames()).toBeGreaterThan(1000 + 2 * batch)
  })

  test('stop() closes its connection: the store closed after it leaves no log behind', async () => {
    const { path, counter, stored } = await world()
    counter.count('b')
    await counter.stop()
    expect(await stored('b')).toBe(8)
    const { db, writer } = opened.pop()!
    await writer!.stop()
    await db.destroy()
    expect(existsSync(`${path}-wal`)).toBe(false)
  })
})
