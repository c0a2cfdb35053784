/** The checkpoint thread copies a store's log into its file as the writer goes, and leaves the writer's close the last word. */
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import { checkpointInBackground, startCheckpointer } from '../../src/store/checkpointer'
import { openStore, type Store } from '../../src/store/db'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('checkpointer')
afterEach(() => dirs.cleanup())

/** Commits `n` publishers with a long description each: pages of the log for the checkpoints to copy. */
async function write(db: Store, from: number, n: number) {
  await db.transaction().execute(async (trx) => {
    for (let i = from; i < from + n; i++)
      await trx
        .insertInto('publishers')
        .values({ id: `p${i}`, name: `P${i}`, description: 'x'.repeat(2000), created_at: 't', updated_at: 't' })
        .execute()
  })
}

describe('the checkpoint thread', () => {
  test('copies the log into the file while the writer goes on; after it stops, the close leaves no log behind', async () => {
    const path = join(dirs.make(), 'registry.db')
    const db = await openStore(path)
    const checkpointer = startCheckpointer(path, 5)
    const before = statSync(path).size
    await write(db, 0, 500)
    // In WAL mode the file itself grows only when a checkpoint copies the log into it.
    while (statSync(path).size <= before) await Bun.sleep(5)
    await write(db, 500, 500)
    await checkpointer.stop()
    await db.destroy()
    expect(existsSync(`${path}-wal`)).toBe(false)
    const again = await openStore(path)
    expect(
      (
        await again
          .selectFrom('publishers')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ).toBe(1000)
    await again.destroy()
  })

  test("in the background (as serve has it), the writer's own checkpoints wait for a 64 MiB log; none for PostgreSQL", async () => {
    const path = join(dirs.make(), 'registry.db')
    const db = await openStore(path)
    const autocheckpoint = async () =>
      (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows[0]!.wal_autocheckpoint
    expect(await autocheckpoint()).toBe(1000) // SQLite's default: the writer copies the log after every 4 MB commit
    expect(await checkpointInBackground(db, undefined)).toBeUndefined()
    const checkpointer = (await checkpointInBackground(db, path))!
    expect(await autocheckpoint()).toBe(16384)
    const before = statSync(path).size
    await write(db, 0, 1000) // about 2,000 pages, more than the default allows the writer
    while (statSync(path).size <= before) await Bun.sleep(5) // copied by the thread
    await checkpointer.stop()
    await db.destroy()
    expect(existsSync(`${path}-wal`)).toBe(false)
  })

  test('a store it cannot open costs nothing: stopping still ends it', async () => {
    const dir = dirs.make()
    const checkpointer = startCheckpointer(dir) // a directory, not a database
    await checkpointer.stop()
    await checkpointer.stop()
  })
})
