/**
 * A write of this process whose index and caches could not be brought up to date after its commit (the store failed
 * just then) is not lost: the store's follower skips this process's own serials, so it applies such writes itself on
 * its next look, as it would another process's.
 */
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { commitWrite } from '../../src/services/changes'
import { createDownloadCounter } from '../../src/services/downloads'
import { createNodeJsonCache } from '../../src/services/node-json'
import { followStore } from '../../src/services/store-follower'
import { openStore, type Store } from '../../src/store/db'
import { seedNodes } from '../support/seed'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('unapplied-changes')
const open: Store[] = []
afterEach(async () => {
  for (const db of open.splice(0)) await db.destroy()
  dirs.cleanup()
})

const now = () => new Date('2026-01-01T00:00:00Z')

/**
 * A serving process whose index reads the store through a handle that fails its next read when told to, or holds
 * the answer of its next read until let go.
 */
async function processWithFlakyIndexReads() {
  const path = join(dirs.make(), 'registry.db')
  const db = await openStore(path)
  open.push(db)
  await seedNodes(db, [
    { id: 'a', description: 'sprocket', downloads: 5 },
    { id: 'b', description: 'flywheel', downloads: 7 },
  ])
  let fail = false
  let held: Promise<void> | undefined
  const indexDb = db.withPlugin({
    transformQuery(args) {
      if (fail && args.node.kind === 'SelectQueryNode') {
        fail = false
        throw new Error('Connection closed')
      }
      return args.node
    },
    async transformResult(args) {
      const wait = held
      held = undefined
      await wait
      return args.result
    },
  })
  const search = createIndexedSearch(indexDb, silentLog)
  await search.warm()
  const nodeJson = createNodeJsonCache(db, 'http://x')
  const deps = { db, search, nodeJson, log: silentLog, now }
  const follower = await followStore(deps, 60_000)
  follower.stop()
  return {
    deps,
    search,
    nodeJson,
    follower,
    failNextIndexRead: () => (fail = true),
    /** Holds the next read's answer; returns what lets it go. */
    holdNextIndexRead: () => {
      let release!: () => void
      held = new Promise<void>((resolve) => (release = resolve))
      return release
    },
  }
}

const described = async (nodeJson: ReturnType<typeof createNodeJsonCache>, id: string) =>
  JSON.parse((await nodeJson.render([id]))[0]!) as { description: string; downloads: number }

test('an edit whose index refresh failed after its commit is applied by the follower', async () => {
  const { deps, search, nodeJson, follower, failNextIndexRead } = await processWithFlakyIndexReads()
  expect((await described(nodeJson, 'a')).description).toBe('sprocket')
  failNextIndexRead()
  const edit = commitWrite(deps, async (w) => {
    await w.db.updateTable('nodes').set({ description: 'gearbox' }).where('id', '=', 'a').execute()
    w.node('a')
  })
  expect(edit).rejects.toThrow('Connection closed')
  await edit.catch(() => {})
  await follower.poll()
  expect((await search.find({ search: 'gearbox', includeBanned: false, offset: 0, limit: 5 })).ids).toEqual(['a'])
  expect((await described(nodeJson, 'a')).description).toBe('gearbox')
})

test('counts whose index refresh failed after their commit are applied by the follower', async () => {
  const { deps, search, follower, failNextIndexRead, holdNextIndexRead } = await processWithFlakyIndexReads()
  const counter = createDownloadCounter(deps)
  // Being refreshed when the counts come (its read held), so that the index reads them from the store, and fails.
  const release = holdNextIndexRead()
  const refreshing = search.nodesChanged(['a'])
  failNextIndexRead()
  for (let i = 0; i < 3; i++) counter.count('a')
  await counter.flush()
  release()
  await refreshing
  await follower.poll()
  expect((await search.find({ includeBanned: false, offset: 0, limit: 10 })).ids).toEqual(['a', 'b'])
})
