/**
 * A transaction declared read-only reads one snapshot on PostgreSQL as it does on SQLite: the export relies on it to
 * write a bundle whose rows, archives and serial range agree while other instances keep writing.
 * Runs in CI's second pass (REGISTRY_MIRROR_TEST_DATABASE); elsewhere without it, it is skipped with a notice (in CI it fails).
 */
import { expect, test } from 'bun:test'
import { appendChanges, feedPosition } from '../../src/store/changes'
import { describeOnBackends, testStore } from '../support/backends'

describeOnBackends('read-only transactions', () => {
  test('see nothing another connection commits after their first read', async () => {
    const { db, close } = await testStore()
    try {
      const serials = await db
        .transaction()
        .setAccessMode('read only')
        .execute(async (trx) => {
          const before = (await feedPosition(trx)).lastSerial
          await db.transaction().execute((w) => appendChanges(w, [{ kind: 'node', id: 'written-meanwhile' }], new Date().toISOString()))
          const after = (await feedPosition(trx)).lastSerial
          const listed = await trx.selectFrom('changes').select('entity_id').where('entity_id', '=', 'written-meanwhile').execute()
          return { before, after, listed: listed.length }
        })
      expect(serials).toEqual({ before: serials.before, after: serials.before, listed: 0 })
      expect((await feedPosition(db)).lastSerial).toBe(serials.before + 1)
    } finally {
      await close()
    }
  })
})
