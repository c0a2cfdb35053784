/**
 * A sync that changes its source's archive mode between serving archives (lazy, eager) and not (none) changes what
 * every node with an archive only mirrored shows: its downloadUrl, install answer and version list. Those nodes are
 * written as changed, so the caches that held their answers (and other processes, through the feed) follow; they
 * kept the old URL until each node changed.
 */
import { afterEach, expect, test } from 'bun:test'
import { feedPosition } from '../../src/store/changes'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { enableLazy, serveTestApp, sync, type ServedApp } from '../support/mirror'

let upstream: ServedApp
let mirror: TestApp
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
})

test('switching a source between lazy and none changes the download URLs served at once, and feeds the nodes', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: makeZip(samplePack()) })
  mirror = await makeTestApp()
  enableLazy(mirror)
  await sync(mirror, upstream.url, { archives: 'lazy' })
  const url = 'http://registry.test/archives/acme/pack/1.0.0/node.zip'
  const shown = async () => {
    const node = (await mirror.call('GET', '/nodes/pack')).body
    const versions = (await mirror.call('GET', '/nodes/pack/versions')).body
    const install = await mirror.call('GET', '/nodes/pack/install')
    return [node.latest_version.downloadUrl, versions[0].downloadUrl, install.status === 200 ? install.body.downloadUrl : install.status]
  }
  expect(await shown()).toEqual([url, url, url])

  const before = (await feedPosition(mirror.deps.db)).lastSerial
  await sync(mirror, upstream.url, { archives: 'none' })
  expect(await shown()).toEqual(['', '', 404])
  const fed = await mirror.deps.db.selectFrom('changes').select(['kind', 'entity_id']).where('serial', '>', before).execute()
  expect(fed).toContainEqual({ kind: 'node', entity_id: 'pack' })

  await sync(mirror, upstream.url, { archives: 'lazy' })
  expect(await shown()).toEqual([url, url, url])
})
