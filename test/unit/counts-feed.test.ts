/**
 * Counts reach whoever follows the feed (schema 17 feeds them from the nodes' narrow rows, not from `changes`): the
 * feed a mirror syncs from lists a counted node at a new serial, rendered with its new count, and a node once however
 * its count and its other changes interleave; another process following the store takes the counts into its index
 * and caches.
 */
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { commitWrite } from '../../src/services/changes'
import type { Deps } from '../../src/services/deps'
import { createDownloadCounter } from '../../src/services/downloads'
import { readFeed } from '../../src/services/feed'
import { createNodeJsonCache } from '../../src/services/node-json'
import { followStore } from '../../src/services/store-follower'
import { feedPosition } from '../../src/store/changes'
import { openStore, type Store } from '../../src/store/db'
import { seedNodes } from '../support/seed'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('counts-feed')
const open: Store[] = []
afterEach(async () => {
  for (const db of open.splice(0)) await db.destroy()
  dirs.cleanup()
})

const now = () => new Date('2026-01-01T00:00:00Z')

async function processOn(path: string) {
  const db = await openStore(path)
  open.push(db)
  const search = createIndexedSearch(db, silentLog)
  await search.warm()
  const nodeJson = createNodeJsonCache(db, 'http://x')
  const deps = { db, search, nodeJson, log: silentLog, now }
  return { ...deps, deps, counter: createDownloadCounter(deps) }
}

async function seeded() {
  const path = join(dirs.make(), 'registry.db')
  const db = await openStore(path)
  await seedNodes(db, [
    { id: 'a', description: 'sprocket', downloads: 5 },
    { id: 'b', description: 'flywheel', downloads: 7 },
  ])
  await db.destroy()
  return path
}

test('the feed lists a counted node at a new serial with its new count, and each node once', async () => {
  const { db, deps, counter } = await processOn(await seeded())
  const feed = (since: number) => readFeed({ db, settings: { publicUrl: 'http://x' } } as unknown as Deps, since, 100)
  const head = (await feedPosition(db)).lastSerial
  counter.count('a')
  counter.count('a')
  await counter.flush()
  const page = await feed(head)
  expect(page.changes.map((c) => [c.kind, c.id, c.op, (c as { entity?: { downloads: number } }).entity?.downloads])).toEqual([
    ['node', 'a', 'upsert', 7],
  ])
  expect(page.next).toBe(page.head)

  // An edit after the count lists the node once, at the edit; a count after that, once again at the count.
  await commitWrite(deps, async (w) => {
    await w.db.updateTable('nodes').set({ description: 'cog' }).where('id', '=', 'a').execute()
    w.node('a')
  })
  const edited = await feed(head)
  expect(edited.changes.map((c) => [c.serial, c.id])).toEqual([[edited.head, 'a']])
  counter.count('b')
  counter.count('a')
  await counter.flush()
  const counted = await feed(head)
  expect(counted.changes.map((c) => c.id).sort()).toEqual(['a', 'b'])
  expect(new Set(counted.changes.map((c) => c.serial)).size).toBe(2)
  expect((await feed(0)).changes.filter((c) => c.kind === 'node').map((c) => c.id)).toEqual(['b', 'a'])
})

test('another process following the store takes the counts into its index and caches', async () => {
  const path = await seeded()
  const writer = await processOn(path)
  const other = await processOn(path)
  const follower = await followStore(other.deps, 60_000)
  follower.stop()
  const served = async (id: string) => JSON.parse((await other.nodeJson.render([id]))[0]!).downloads as number
  expect(await served('a')).toBe(5)
  expect((await other.search.find({ includeBanned: false, offset: 0, limit: 10 })).ids).toEqual(['b', 'a'])
  for (let i = 0; i < 3; i++) writer.counter.count('a')
  await writer.counter.flush()
  await follower.poll()
  expect(await served('a')).toBe(8)
  expect((await other.search.find({ includeBanned: false, offset: 0, limit: 10 })).ids).toEqual(['a', 'b'])
})

test("another process's edit of a node reaches a process that counted that node after it", async () => {
  const path = await seeded()
  const editor = await processOn(path)
  const served = await processOn(path)
  const follower = await followStore(served.deps, 60_000)
  follower.stop()
  await served.nodeJson.render(['a'])
  await commitWrite(editor.deps, async (w) => {
    await w.db.updateTable('nodes').set({ description: 'gearbox' }).where('id', '=', 'a').execute()
    w.node('a')
  })
  // Counted here before the follower looked: in the merged feed the node's newest serial is this process's count.
  served.counter.count('a')
  await served.counter.flush()
  await follower.poll()
  expect((await served.search.find({ search: 'gearbox', includeBanned: false, offset: 0, limit: 5 })).ids).toEqual(['a'])
  const node = JSON.parse((await served.nodeJson.render(['a']))[0]!) as { description: string; downloads: number }
  expect([node.description, node.downloads]).toEqual(['gearbox', 6])
})

test("a process following its store reads none of its own counts back, and still reads another's", async () => {
  const path = join(dirs.make(), 'registry.db')
  const seed = await openStore(path)
  await seedNodes(
    seed,
    Array.from({ length: 300 }, (_, i) => ({ id: `n${i}` })),
  )
  await seed.destroy()
  const elsewhere = await processOn(path)
  const served = await processOn(path)
  let feedRowsRead = 0
  const db = served.db.withPlugin({
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      const isFeedRow = (row: object | undefined) => row !== undefined && 'entity_id' in row
      if (isFeedRow(args.result.rows[0])) feedRowsRead += args.result.rows.length
      return args.result
    },
  })
  const deps = { ...served.deps, db }
  const counter = createDownloadCounter(deps)
  const follower = await followStore(deps, 60_000)
  follower.stop()
  for (let i = 0; i < 300; i++) counter.count(`n${i}`)
  await counter.flush()
  await follower.poll()
  expect(feedRowsRead).toBe(0)
  elsewhere.counter.count('n7')
  await elsewhere.counter.flush()
  await follower.poll()
  expect(feedRowsRead).toBe(1)
  expect(JSON.parse((await served.nodeJson.render(['n7']))[0]!).downloads).toBe(2)
})
