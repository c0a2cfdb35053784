/**
 * A claim inserted as the database connection went (the INSERT applied, its answer lost): the upload fails with
 * 503 database_unavailable, and the retry that asks for must be taken once the database answers again, not refused
 * as 409 upload_in_progress for the two minutes a claim takes to count as abandoned. The store's answer to that one
 * INSERT is replaced by a lost connection's error after the row is written.
 */
import { afterEach, expect, test } from 'bun:test'
import type { KyselyPlugin, RootOperationNode } from 'kysely'
import { aliceWithPublisher, makeTestApp, publish, upload, type TestApp } from '../support/app'

let t: TestApp | undefined
afterEach(async () => {
  await t?.cleanup()
})

const connectionClosed = () => Object.assign(new Error('Connection closed'), { code: 'ERR_POSTGRES_CONNECTION_CLOSED' })

const insertsClaim = (node: RootOperationNode) => node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === 'upload_claims'

/** Lets the first insert of a claim through, then answers it with a lost connection's error. */
function loseFirstClaimAnswer(): KyselyPlugin & { lost: number } {
  const claims = new Set<unknown>()
  return {
    lost: 0,
    transformQuery(args) {
      if (insertsClaim(args.node)) claims.add(args.queryId)
      return args.node
    },
    async transformResult(args) {
      if (claims.has(args.queryId) && this.lost === 0) {
        this.lost++
        throw connectionClosed()
      }
      return args.result
    },
  }
}

test('a claim whose answer was lost is freed: the retry of the URL is taken', async () => {
  t = await makeTestApp()
  const { pat } = await aliceWithPublisher(t)
  const published = await publish(t, { pat, node: 'pack', version: '1.0.0' })
  const plugin = loseFirstClaimAnswer()
  t.deps.db = t.deps.db.withPlugin(plugin)

  const first = await upload(t, published.body.signedUrl)
  expect({ status: first.status, error: first.body.error, lost: plugin.lost }).toEqual({
    status: 503,
    error: 'database_unavailable',
    lost: 1,
  })
  const retry = await upload(t, published.body.signedUrl)
  expect({ status: retry.status, error: retry.body.error }).toEqual({ status: 200, error: undefined })
})
