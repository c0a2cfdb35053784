/**
 * Export's "N versions have their archives not stored here ... run sync --archives" counts only what such a sync
 * would fetch: an active version. A flagged (or pending) version's archive is not fetched by sync and not
 * downloadable anyway, so after `sync --archives` the warning sent the operator to run a sync that changes nothing.
 */
import { afterEach, expect, test } from 'bun:test'
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { exportBundle } from '../../src/services/mirror/bundle'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publish, publishActive, upload, type TestApp } from '../support/app'
import { serveTestApp, sync, type ServedApp } from '../support/mirror'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('export-missing-archives')
let upstream: ServedApp
let mirror: TestApp
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
  dirs.cleanup()
})

test('after sync --archives, a flagged version upstream is not counted as an archive to fetch', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0' })
  const created = await publish(upstream, { pat, node: 'pack', version: '0.9.0' })
  const outside = makeZip(samplePack([{ name: '../outside.py', data: 'x = 1' }]))
  expect((await upload(upstream, created.body.signedUrl, outside)).body.node_version.status).toBe('NodeVersionStatusFlagged')
  mirror = await makeTestApp()
  const summary = await sync(mirror, upstream.url, { archives: 'eager' })
  expect(summary.archives.fetched).toBe(1)
  const result = await exportBundle(mirror.deps, 0, createWriteStream(join(dirs.make(), 'bundle.tar')))
  expect(result.manifest.archives).toHaveLength(1)
  expect(result.missingArchives).toBe(0)
})

test('after sync --archives=lazy, the active version not fetched yet is still counted', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0' })
  mirror = await makeTestApp()
  await sync(mirror, upstream.url, { archives: 'lazy' })
  const result = await exportBundle(mirror.deps, 0, createWriteStream(join(dirs.make(), 'bundle.tar')))
  expect(result.missingArchives).toBe(1)
})
