/**
 * A node's latest version when two instances on PostgreSQL write its versions at once (one approves 1.2.0 while the
 * other deletes 1.1.0): each write reads the node's versions only once it holds the node's row, so the second reads
 * what the first committed. Read before, the second chose among the versions as they were before the first (1.2.0
 * still pending), set 1.0.0 once the first had committed, and the node showed and installed 1.0.0 until its versions
 * were next written.
 */
import { afterEach, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { createStoreSearch } from '../../src/search/store-search'
import { commitWrite } from '../../src/services/changes'
import { refreshLatest } from '../../src/services/latest'
import { createNodeJsonCache } from '../../src/services/node-json'
import { openStore, type Store } from '../../src/store/db'
import { findNode } from '../../src/store/nodes'
import { findVersion, insertVersion, updateVersion } from '../../src/store/versions'
import { describeOnBackends, TEST_DATABASE, testSchema } from '../support/backends'
import { eventually } from '../support/eventually'
import { seedNodes } from '../support/seed'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

const NOW = '2026-01-01T00:00:00.000Z'

const writerOn = (db: Store) => ({ db, now: () => new Date(NOW), search: createStoreSearch(db), nodeJson: createNodeJsonCache(db, '') })

async function addVersion(db: Store, version: string, status: 'active' | 'pending') {
  await insertVersion(db, {
    id: crypto.randomUUID(),
    node_id: 'pack',
    version,
    changelog: '',
    dependencies_json: '[]',
    supported_os_json: '[]',
    supported_accelerators_json: '[]',
    supported_hostui_version: '',
    supported_hostui_frontend_version: '',
    tags_json: '[]',
    status,
    host_node_extract_status: 'success',
    created_at: NOW,
    updated_at: NOW,
  })
}

describeOnBackends('the latest version under writes of two instances', () => {
  test.skipIf(!TEST_DATABASE)(
    'a version approved on one while another is deleted on the other: the node ends on the approved one',
    async () => {
      const schema = await testSchema()
      cleanups.push(schema.drop)
      const [a, b] = [await openStore(schema.url), await openStore(schema.url)]
      cleanups.push(
        () => a.destroy(),
        () => b.destroy(),
      )
      await seedNodes(a, [{ id: 'pack' }])
      await addVersion(a, '1.1.0', 'active')
      await addVersion(a, '1.2.0', 'pending')
      await a.transaction().execute((trx) => refreshLatest(trx, 'pack', NOW))
      const idOf = async (version: string) => (await findVersion(a, 'pack', version))!.id
      expect((await findNode(a, 'pack'))!.latest_version_id).toBe(await idOf('1.1.0'))

      // A approves 1.2.0 and is held before its commit; B deletes 1.1.0 meanwhile.
      const { promise: released, resolve: release } = Promise.withResolvers<void>()
      const { promise: atCommit, resolve: approved } = Promise.withResolvers<void>()
      const approve = commitWrite(writerOn(a), async (w) => {
        await updateVersion(w.db, await idOf('1.2.0'), { status: 'active' }, w.now)
        await refreshLatest(w.db, 'pack', w.now)
        w.version(await idOf('1.2.0'), 'pack')
        approved()
        await released
      })
      await atCommit
      let deleted = false
      const remove = commitWrite(writerOn(b), async (w) => {
        await updateVersion(w.db, await idOf('1.1.0'), { status: 'deleted' }, w.now)
        await refreshLatest(w.db, 'pack', w.now)
        w.version(await idOf('1.1.0'), 'pack')
      }).finally(() => (deleted = true))
      // B waits for A's hold on the node's row (it never commits before A does).
      const waiting = async () =>
        (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`.execute(a)).rows[0]!.n > 0
      await eventually(async () => deleted || (await waiting()), { everyMs: 10 })
      release()
      await approve
      await remove
      expect((await findNode(a, 'pack'))!.latest_version_id).toBe(await idOf('1.2.0'))
    },
  )
})
