/**
 * An upload completing on one instance while an admin moderates that version on another (PostgreSQL): the upload
 * moves only a pending version on, and reads its status once it holds the version's row, so the admin's status is
 * never overwritten. It read the status unheld: an admin's flag that committed between that read and the upload's
 * write of the status was replaced by "active", for good.
 */
import { afterEach, expect, test } from 'bun:test'
import { sql, type InsertQueryNode } from 'kysely'
import { openStore } from '../../src/store/db'
import { addUser, aliceWithPublisher, makeTestApp, publish, upload } from '../support/app'
import { describeOnBackends, TEST_DATABASE, testSchema } from '../support/backends'
import { eventually } from '../support/eventually'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

describeOnBackends('an upload and a moderation of its version at once', () => {
  test.skipIf(!TEST_DATABASE)('an admin flags the version while its archive is being recorded: it stays flagged', async () => {
    const schema = await testSchema()
    cleanups.push(schema.drop)
    // The uploading instance's write pauses once the archive's row is written (the version's status read before).
    const { promise: atArchive, resolve: reached } = Promise.withResolvers<void>()
    const { promise: released, resolve: release } = Promise.withResolvers<void>()
    const archiveInserts = new Set<unknown>()
    const base = await openStore(schema.url)
    const uploading = base.withPlugin({
      transformQuery(args) {
        const into = (args.node as InsertQueryNode).into?.table.identifier.name
        if (args.node.kind === 'InsertQueryNode' && into === 'archives') archiveInserts.add(args.queryId)
        return args.node
      },
      async transformResult(args) {
        if (archiveInserts.has(args.queryId)) {
          reached()
          await released
        }
        return args.result
      },
    })
    const a = await makeTestApp({ store: uploading })
    const other = await openStore(schema.url)
    const b = await makeTestApp({ store: other })
    cleanups.push(
      () => base.destroy(),
      () => other.destroy(),
      () => a.cleanup(),
      () => b.cleanup(),
    )
    const { pat } = await aliceWithPublisher(a)
    const admin = await addUser(a, 'root', { admin: true })
    const published = await publish(a, { pat, node: 'pack', version: '1.0.0' })
    expect(published.status).toBe(201)

    const uploaded = upload(a, published.body.signedUrl)
    await atArchive
    let moderated = false
    const flag = b
      .call('PUT', '/admin/nodes/pack/versions/1.0.0', {
        token: admin,
        body: { status: 'NodeVersionStatusFlagged', status_reason: 'malware' },
      })
      .finally(() => (moderated = true))
    // The moderation commits, or waits for the upload's hold on the version's row.
    const waiting = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`.execute(other)).rows[0]!.n >
      0
    await eventually(async () => moderated || (await waiting()), { everyMs: 10 })
    release()
    expect((await uploaded).status).toBe(200)
    expect((await flag).status).toBe(200)
    const version = await b.call('GET', '/nodes/pack/versions/1.0.0')
    expect([version.body.status, version.body.status_reason]).toEqual(['NodeVersionStatusFlagged', 'malware'])
  })
})
