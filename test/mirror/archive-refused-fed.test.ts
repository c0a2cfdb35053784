/**
 * A lazy mirror's archive refused on its first download (other bytes than pinned) is no longer served, and the node
 * says so at once: its latest version's downloadUrl and its install answer, held in memory before the refusal, are
 * what a fresh process answers (they kept the URL until the node changed); the node is fed, for other processes.
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

test('a refused archive leaves the node without a download URL at once, and feeds the node', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: makeZip(samplePack()) })
  mirror = await makeTestApp()
  enableLazy(mirror, { attempts: 1 })
  await sync(mirror, upstream.url, { archives: 'lazy' })
  const path = '/archives/acme/pack/1.0.0/node.zip'
  const shown = async () => {
    const install = await mirror.call('GET', '/nodes/pack/install')
    return [(await mirror.call('GET', '/nodes/pack')).body.latest_version.downloadUrl, install.status]
  }
  expect(await shown()).toEqual([`http://registry.test${path}`, 200])

  const other = makeZip(samplePack([{ name: 'other.bin', data: new Uint8Array(300).fill(7) }]))
  upstream.intercept = (url) =>
    url.pathname === path ? new Response(other, { headers: { 'content-type': 'application/zip' } }) : undefined
  const before = (await feedPosition(mirror.deps.db)).lastSerial
  expect((await mirror.call('GET', path)).body.error).toBe('archive_refused')
  expect(await shown()).toEqual(['', 404])
  const fed = await mirror.deps.db.selectFrom('changes').select(['kind', 'entity_id']).where('serial', '>', before).execute()
  expect(fed).toContainEqual({ kind: 'node', entity_id: 'pack' })
})
