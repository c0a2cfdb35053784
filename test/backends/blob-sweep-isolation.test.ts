/**
 * The sweep's decision on PostgreSQL where the database's default isolation is repeatable read (or serializable), as
 * some operators set it: a transaction's snapshot is taken by its first statement, the sweep's wait for its lock, so
 * the sweep did not see an intent committed while it waited, and deleted bytes that writer then pointed its row at.
 */
import { afterEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { deleteUnreferenced } from '../../src/services/blob-sweep'
import { holdSweepLock, insertIntents } from '../../src/store/blob-intents'
import { openStore } from '../../src/store/db'
import { describeOnBackends, testSchema } from '../support/backends'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

describeOnBackends('the sweep under a stricter default isolation', () => {
  for (const level of ['repeatable read', 'serializable']) {
    test(`default ${level}: an intent committed while the sweep waits for its lock keeps the bytes`, async () => {
      const schema = await testSchema()
      cleanups.push(schema.drop)
      const url = new URL(schema.url)
      url.searchParams.set('options', `${url.searchParams.get('options')} -c default_transaction_isolation=${level.replace(' ', '\\ ')}`)
      const writer = await openStore(url.toString())
      const sweeper = await openStore(url.toString())
      cleanups.push(
        () => writer.destroy(),
        () => sweeper.destroy(),
      )
      const dir = mkdtempSync(join(tmpdir(), 'blob-sweep-isolation-'))
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
      const blobs = createDiskBlobStore(dir)
      const staged = await blobs.stage(new Blob(['an orphan a writer is about to use']).stream(), 1000)
      await staged.commit()

      // A writer recording its intent, held mid-transaction (with the shared lock) until the sweep waits for its own.
      const { promise: held, resolve: letGo } = Promise.withResolvers<void>()
      const { promise: lockTaken, resolve: locked } = Promise.withResolvers<void>()
      const writing = writer.transaction().execute(async (trx) => {
        await holdSweepLock(trx, 'shared')
        locked()
        await held
        await trx.insertInto('blob_intents').values({ id: 'w', sha256: staged.sha256, created_at: new Date().toISOString() }).execute()
      })
      await lockTaken
      const sweeping = deleteUnreferenced({ db: sweeper, blobs }, [staged.sha256])
      await Bun.sleep(300) // the sweep's transaction has begun, and waits for the lock
      letGo()
      await writing
      expect(await sweeping).toEqual([])
      expect(await blobs.has(staged.sha256)).toBe(true)
    })
  }
})
