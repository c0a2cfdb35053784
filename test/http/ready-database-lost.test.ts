/**
 * /ready while the database goes away: the answer is its own body (503, database failing), also when the database
 * went between its first query and its later ones, and the search index is not called drifted for want of a count
 * to compare it with. It answered the error body of a failed request (database_unavailable) when the database went
 * between the queries, and "drifted" for the whole outage.
 */
import { afterEach, expect, test } from 'bun:test'
import type { KyselyPlugin } from 'kysely'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'

let t: TestApp | undefined
afterEach(async () => {
  await t?.cleanup()
})

const connectionClosed = () => Object.assign(new Error('Connection closed'), { code: 'ERR_POSTGRES_CONNECTION_CLOSED' })

/** The store, failing from its `from`th query on as a lost connection does. */
function failingFrom(from: number): KyselyPlugin {
  let queries = 0
  return {
    transformQuery(args) {
      if (++queries >= from) throw connectionClosed()
      return args.node
    },
    transformResult: async (args) => args.result,
  }
}

async function readyWith(plugin: KyselyPlugin) {
  t = await makeTestApp()
  const { pat } = await aliceWithPublisher(t)
  await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
  expect((await t.call('GET', '/ready')).body.status).toBe('ready')
  t.deps.db = t.deps.db.withPlugin(plugin)
  return t.call('GET', '/ready')
}

test('the database going between the first look and the counts: 503 with the readiness body', async () => {
  const ready = await readyWith(failingFrom(3)) // after `select 1` and the schema version
  expect(ready.status).toBe(503)
  expect(ready.body).toMatchObject({ status: 'not_ready', database: 'failing' })
  expect(ready.body.search.state).not.toBe('drifted')
})

test('the database away: failing, and the index is not called drifted', async () => {
  const ready = await readyWith(failingFrom(1))
  expect(ready.status).toBe(503)
  expect(ready.body).toMatchObject({ status: 'not_ready', database: 'failing', search: { state: 'ready', indexed: 1 } })
})
