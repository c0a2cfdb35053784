/** An image upload that cannot record its blob intent (the database went just then) discards the bytes it staged. */
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { addUser, makeTestApp, type TestApp } from '../support/app'
import { PNG, startFakeProvider, useProvider, type FakeProvider } from '../support/video-provider'

let fake: FakeProvider
let t: TestApp
beforeAll(async () => (fake = await startFakeProvider()))
afterAll(() => fake.stop())
afterEach(() => t.cleanup())

test('a PUT whose intent fails leaves nothing staged in tmp/', async () => {
  // SQLite whatever the pass's backend: the table is dropped from under the store.
  t = await makeTestApp({ settings: { video: { public: false, maxImageBytes: 4096 } }, local: true })
  useProvider(t, fake)
  const alice = await addUser(t, 'alice')
  const body = { file_name: 'frame.png', content_type: 'image/png' }
  const { upload_url } = (await t.call('POST', '/customers/storage', { headers: { 'x-api-key': alice }, body })).body
  // Every insert of an intent fails, as it does with the database gone between the staging and the intent.
  await t.deps.db.schema.dropTable('blob_intents').execute()
  const res = await t.app.request(upload_url, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: PNG })
  expect(res.status).toBe(500)
  expect(readdirSync(join(t.dir, 'tmp'))).toEqual([])
})
