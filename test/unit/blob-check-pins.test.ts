/**
 * `blobs check` on bytes a mirror pin keeps (its row names them, no archive does yet): neither unreferenced nor
 * "held by blob intents only", which counts the bytes that intents alone keep.
 */
import { afterEach, expect, test } from 'bun:test'
import { checkBlobs } from '../../src/services/blob-sweep'
import { ensureSource } from '../../src/store/mirror-sources'
import { aliceWithPublisher, makeTestApp, publish, type TestApp } from '../support/app'

let t: TestApp
afterEach(() => t.cleanup())

test('bytes only a mirror pin names are referenced, and not said as held by intents', async () => {
  t = await makeTestApp()
  t.clock.now = new Date()
  const { pat } = await aliceWithPublisher(t)
  await publish(t, { pat, node: 'pinned', version: '1.0.0' })
  const version = await t.deps.db.selectFrom('node_versions').select('id').where('node_id', '=', 'pinned').executeTakeFirstOrThrow()
  const staged = await t.deps.blobs.stage(new Blob(['bytes a lazy first download binds']).stream(), 1000)
  await staged.commit()
  const now = t.clock.now.toISOString()
  await ensureSource(t.deps.db, 'upstream', 'feed', now)
  await t.deps.db
    .insertInto('mirror_archives')
    .values({
      version_id: version.id,
      source_id: 'upstream',
      url: 'http://upstream.test/a.zip',
      sha256: staged.sha256,
      size_bytes: 33,
      etag: null,
    })
    .execute()
  const checked = await checkBlobs(t.deps, { now: new Date(Date.now() + 1000), listed: 10 })
  expect(checked.stored.count).toBe(1)
  expect(checked.unreferenced.count).toBe(0)
  expect(checked.held).toEqual({ count: 0, bytes: 0 })
})
