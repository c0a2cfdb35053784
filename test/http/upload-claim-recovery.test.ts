/**
 * A signed upload whose process died mid-stream (kill -9, a crash, an OOM kill) leaves its claim behind. Once the
 * claim has gone unrenewed past CLAIM_STALE_MS, a retry of the still valid URL takes it over and succeeds; a claim
 * an upload under way keeps renewing is never taken.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { CLAIM_STALE_MS, keepClaim } from '../../src/services/upload'
import { aliceWithPublisher, makeTestApp, publish, upload, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

const ago = (ms: number) => new Date(t.clock.now.getTime() - ms).toISOString()

async function publishWithClaim(version: string, claimedAt: string) {
  const { pat } = await aliceWithPublisher(t)
  const res = await publish(t, { pat, node: 'pack', version })
  expect(res.status).toBe(201)
  const id = res.body.node_version.id as string
  // What a process killed mid-upload leaves: its claim, no archive.
  await t.deps.db.insertInto('upload_claims').values({ version_id: id, claimed_at: claimedAt }).execute()
  return { signedUrl: res.body.signedUrl as string, id }
}

test('a retry of the URL takes over the claim of an upload that died, and stores the archive', async () => {
  const { signedUrl } = await publishWithClaim('1.0.0', ago(CLAIM_STALE_MS + 1000))
  const retry = await upload(t, signedUrl)
  expect(retry.status).toBe(200)
  expect(retry.body.node_version.status).toBe('NodeVersionStatusActive')
  expect((await upload(t, signedUrl)).body.error).toBe('archive_exists')
})

test('a claim renewed within the window is an upload under way: 409 upload_in_progress', async () => {
  const { signedUrl } = await publishWithClaim('1.0.0', ago(CLAIM_STALE_MS - 1000))
  const retry = await upload(t, signedUrl)
  expect(retry.status).toBe(409)
  expect(retry.body.error).toBe('upload_in_progress')
})

test('an upload under way renews its claim', async () => {
  const { id } = await publishWithClaim('1.0.0', ago(CLAIM_STALE_MS + 1000))
  const renewing = keepClaim(t.deps, id, 5)
  try {
    for (let i = 0; i < 100; i++) {
      const row = await t.deps.db.selectFrom('upload_claims').select('claimed_at').where('version_id', '=', id).executeTakeFirst()
      if (row?.claimed_at === t.clock.now.toISOString()) return
      await Bun.sleep(10)
    }
    throw new Error('the claim was not renewed')
  } finally {
    renewing.stop()
  }
})
