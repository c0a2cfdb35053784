/**
 * Writes on a SQLite store beside another process writing the same file (a command beside the server, another
 * instance): a transaction that reads before it writes waits for the lock instead of failing, a write waits with the
 * event loop free, and a read-only transaction takes no lock.
 */
import { Database } from 'bun:sqlite'
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { silentLog } from '../../src/log'
import { createStoreSearch } from '../../src/search/store-search'
import { createNodeJsonCache } from '../../src/services/node-json'
import { openStore, type Store } from '../../src/store/db'
import { isDatabaseLocked } from '../../src/store/sqlite-adapter'
import { seedNodes } from '../support/seed'
import { appendPlus } from '../support/writes'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('write-lock')
const stores: Store[] = []
afterEach(async () => {
  for (const db of stores.splice(0)) await db.destroy()
  dirs.cleanup()
})

/** Another process inserting publishers into the store, a commit every millisecond or so, until killed; says 'writing' after its first. */
function otherWriter(path: string) {
  const script = `
    const { Database } = require('bun:sqlite')
    const db = new Database(${JSON.stringify(path)})
    db.run('PRAGMA busy_timeout = 5000')
    const insert = db.prepare("insert into publishers (id, name, created_at, updated_at) values (?, 'x', 't', 't')")
    for (let i = 0; ; i++) {
      insert.run('other-' + i)
      if (i === 0) console.log('writing') // after a first commit: the writes here may keep it from the lock after
      Bun.sleepSync(1)
    }
  `
  return Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' })
}

test('a write that reads first, while another process commits writes, waits for the lock and succeeds', async () => {
  const path = join(dirs.make(), 'registry.db')
  const db = await openStore(path)
  stores.push(db)
  await seedNodes(db, [{ id: 'a', description: 'd' }])
  const deps = { db, search: createStoreSearch(db), nodeJson: createNodeJsonCache(db, 'http://x'), log: silentLog, now: () => new Date() }
  const other = otherWriter(path)
  try {
    await other.stdout.getReader().read() // 'writing'
    // Each pauses 2 ms between its read and its write: the other process commits meanwhile.
    const failures = (await Promise.all(Array.from({ length: 20 }, () => appendPlus(deps, 'a', 2)))).filter((why) => why !== undefined)
    expect(failures).toEqual([])
  } finally {
    other.kill()
    await other.exited
  }
  const a = await db.selectFrom('nodes').select('description').where('id', '=', 'a').executeTakeFirstOrThrow()
  expect(a.description).toBe(`d${'+'.repeat(20)}`)
  const others = await db
    .selectFrom('publishers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', 'like', 'other-%')
    .executeTakeFirstOrThrow()
  expect(Number(others.n)).toBeGreaterThan(0)
})

test('a read-only transaction takes no write lock: another connection writes while it is open', async () => {
  const path = join(dirs.make(), 'registry.db')
  const db = await openStore(path)
  const second = await openStore(path)
  stores.push(db, second)
  await seedNodes(db, [{ id: 'a', description: 'd' }])
  await db
    .transaction()
    .setAccessMode('read only')
    .execute(async (trx) => {
      await trx.selectFrom('nodes').select('id').execute()
      // Would wait out the busy timeout and fail were the transaction holding the write lock (one thread here).
      await second.updateTable('nodes').set({ description: 'e' }).where('id', '=', 'a').execute()
    })
  const a = await second.selectFrom('nodes').select('description').where('id', '=', 'a').executeTakeFirstOrThrow()
  expect(a.description).toBe('e')
})

test("a write that meets another connection's lock waits with the event loop free, reads going on, then lands", async () => {
  const path = join(dirs.make(), 'registry.db')
  const db = await openStore(path)
  stores.push(db)
  const other = new Database(path)
  other.run('begin immediate')
  let ticks = 0
  const ticker = setInterval(() => ticks++, 2)
  const publisher = (id: string) => ({ id, name: id, created_at: 't', updated_at: 't' })
  let settled = 0
  const writes = [
    db.insertInto('publishers').values(publisher('alone')).execute(),
    db.transaction().execute((trx) => trx.insertInto('publishers').values(publisher('in-a-transaction')).execute()),
  ].map((write) => write.finally(() => settled++))
  try {
    // In SQLite's busy handler, the thread slept until the other connection let go, and nothing here could.
    await Bun.sleep(100)
    expect(settled).toBe(0)
    expect(ticks).toBeGreaterThan(20)
    // Reads are answered meanwhile: the waiting writes let the connection go between their tries.
    expect(await db.selectFrom('publishers').select('id').execute()).toEqual([])
    expect(settled).toBe(0)
  } finally {
    clearInterval(ticker)
    other.run('commit')
    other.close()
  }
  await Promise.all(writes)
  const ids = await db.selectFrom('publishers').select('id').orderBy('id').execute()
  expect(ids.map((p) => p.id)).toEqual(['alone', 'in-a-transaction'])
})

test("the lock is known in each of SQLite's words for it", () => {
  const error = (code: string, errno: number) => Object.assign(new Error('database is locked'), { code, errno })
  expect(isDatabaseLocked(error('SQLITE_BUSY', 5))).toBe(true)
  expect(isDatabaseLocked(error('SQLITE_BUSY_RECOVERY', 261))).toBe(true)
  expect(isDatabaseLocked(error('SQLITE_BUSY_SNAPSHOT', 517))).toBe(true)
  expect(isDatabaseLocked(error('SQLITE_BUSY_TIMEOUT', 773))).toBe(true)
  expect(isDatabaseLocked(error('SQLITE_LOCKED', 6))).toBe(false)
  expect(isDatabaseLocked(error('SQLITE_CONSTRAINT_UNIQUE', 2067))).toBe(false)
  expect(isDatabaseLocked(new Error('no code'))).toBe(false)
  expect(isDatabaseLocked(Object.assign(new Error('PostgreSQL'), { errno: '00005' }))).toBe(false)
})
