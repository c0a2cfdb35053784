/** Following the store's feed applies other processes' writes, not this process's own (applied when made). */
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { commitWrite } from '../../src/services/changes'
import { createDownloadCounter } from '../../src/services/downloads'
import { createNodeJsonCache } from '../../src/services/node-json'
import { ownSerials } from '../../src/services/own-serials'
import { followStore } from '../../src/services/store-follower'
import { openStore, type Store } from '../../src/store/db'
import { seedNodes } from '../support/seed'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('own-serials')
const stores: Store[] = []
afterEach(async () => {
  for (const db of stores.splice(0)) await db.destroy()
  dirs.cleanup()
})

test("a counter flush of this process, read back from the feed, keeps its rendered nodes; another process's write is applied", async () => {
  const path = join(dirs.make(), 'registry.db')
  const db = await openStore(path)
  const other = await openStore(path) // another process's handle on the same store
  stores.push(db, other)
  await seedNodes(db, [
    { id: 'a', description: 'sprocket' },
    { id: 'b', description: 'flywheel' },
  ])
  const search = createIndexedSearch(db, silentLog)
  await search.warm()
  const nodeJson = createNodeJsonCache(db, 'http://x')
  const deps = { db, search, nodeJson, log: silentLog, now: () => new Date() }
  const follower = await followStore(deps, 60_000)
  follower.stop()
  const counter = createDownloadCounter(deps)
  await nodeJson.render(['a', 'b'])

  counter.count('a')
  await counter.flush()
  await commitWrite({ ...deps, db: other }, async (w) => {
    await w.db.updateTable('nodes').set({ description: 'gearbox' }).where('id', '=', 'b').execute()
    w.node('b')
  })
  const before = nodeJson.sequence
  await follower.poll()
  expect(nodeJson.contentChangedAfter('a', before)).toBe(false) // own flush: not applied again
  expect(nodeJson.contentChangedAfter('b', before)).toBe(true) // the other process's write
  expect((await search.find({ search: 'gearbox', includeBanned: false, offset: 0, limit: 5 })).ids).toEqual(['b'])
  expect(JSON.parse((await nodeJson.render(['a']))[0]!).downloads).toBe(1)
})

test("the stretches of the feed between this process's own serials", () => {
  const db = {}
  expect(ownSerials.othersBetween(db, 10, 20)).toEqual([[10, 20]])
  ownSerials.record(db, { first: 14, last: 15 })
  ownSerials.record(db, { first: 12, last: 13 }) // recorded out of order, adjacent to the one before
  ownSerials.record(db, { first: 18, last: 25 })
  ownSerials.record(db, { first: 3, last: 5 })
  expect(ownSerials.othersBetween(db, 10, 20)).toEqual([
    [10, 11],
    [15, 17],
  ])
  expect(ownSerials.othersBetween(db, 11, 12)).toEqual([])
  expect(ownSerials.othersBetween(db, 20, 30)).toEqual([[25, 30]])
  ownSerials.forgetThrough(db, 15)
  expect(ownSerials.othersBetween(db, 0, 16)).toEqual([[0, 16]])
})
