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
