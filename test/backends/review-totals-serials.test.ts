/**
 * Schema 15's feed entries (the nodes whose review totals it computes again) on PostgreSQL while an instance of the
 * previous release keeps writing (a rolling upgrade): the serials it takes are reserved as every write reserves
 * them, never ones another transaction took meanwhile. It read the counter, wrote its entries after it and set the
 * counter last: a write committed in between had its serials given again, and the counter could move back, so
 * other instances' followers and mirrors skipped the writes after it at serials they had seen.
 */
import { afterEach, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { appendChanges } from '../../src/store/changes'
import { openStore } from '../../src/store/db'
import { MIGRATIONS } from '../../src/store/migrations'
import { describeOnBackends, TEST_DATABASE, testSchema } from '../support/backends'
import { eventually } from '../support/eventually'
import { seedNodes } from '../support/seed'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

const NOW = '2026-01-01T00:00:00.000Z'
const reviewTotals = MIGRATIONS.find((m) => m.version === 15)!

describeOnBackends('schema 15 beside a writing instance', () => {
  test.skipIf(!TEST_DATABASE)('its feed entries take serials no other write took, and the counter never moves back', async () => {
    const schema = await testSchema()
    cleanups.push(schema.drop)
    const migrating = await openStore(schema.url)
    const writing = await openStore(schema.url)
    cleanups.push(
      () => migrating.destroy(),
      () => writing.destroy(),
    )
    await seedNodes(migrating, [{ id: 'a' }, { id: 'b' }])
    // Totals that do not match the reviews (none): the step computes them again and feeds both nodes.
    await migrating.updateTable('nodes').set({ star_total: 9, review_count: 2 }).execute()

    // The step paused at its first statement on the counter row, the other instance's write sent meanwhile.
    const { promise: atCounter, resolve: paused } = Promise.withResolvers<void>()
    const { promise: released, resolve: release } = Promise.withResolvers<void>()
    const held = migrating.withPlugin({
      transformQuery: (args) => args.node,
      async transformResult(args) {
        if (JSON.stringify(args.result.rows[0] ?? {}).includes('last_serial')) {
          paused()
          await released
        }
        return args.result
      },
    })
    const migration = held.transaction().execute((trx) => reviewTotals.up(trx, { dialect: 'postgres', now: NOW }))
    await atCounter
    let written = false
    const write = writing
      .transaction()
      .execute((trx) => appendChanges(trx, [{ kind: 'publisher', id: 'acme' }], NOW))
      .finally(() => (written = true))
    // It commits, or waits for the step's lock on the counter row.
    const waiting = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`.execute(migrating)).rows[0]!
        .n > 0
    await eventually(async () => written || (await waiting()), { everyMs: 10 })
    release()
    await migration
    await write

    const serials = (await migrating.selectFrom('changes').select(['serial', 'entity_id']).orderBy('serial').execute()).map((c) =>
      Number(c.serial),
    )
    expect(new Set(serials).size).toBe(serials.length)
    const counter = await migrating.selectFrom('registry_instance').select('last_serial').executeTakeFirstOrThrow()
    expect(Number(counter.last_serial)).toBe(Math.max(...serials))
  })
})
