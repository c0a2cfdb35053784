/**
 * The video provider's refusal passed on names an address with its signature (an image it could not fetch, its
 * own storage): passed on without the address's query or user, as every upstream address is shown.
 */
import { expect, test } from 'bun:test'
import { fake, start, t, useVideoSuite } from '../support/video-suite'

useVideoSuite()

const SIGNATURE = 'X-Amz-Signature=3f2a9c0d1e-secret'

test("a provider's refusal naming a presigned address: passed on and logged without its query", async () => {
  const image = `https://bucket.example/in/start.png?X-Amz-Credential=AKIAEXAMPLE&${SIGNATURE}`
  fake.onStart = { status: 500, body: { reason: 'ImageDownloadFailure', message: `could not download ${image}` } }
  const res = await start()
  expect(res.status).toBe(502)
  expect(res.body.details).toEqual(['provider: ImageDownloadFailure: could not download https://bucket.example/in/start.png'])
  for (const line of t.logs) expect(line).not.toContain(SIGNATURE)
})
