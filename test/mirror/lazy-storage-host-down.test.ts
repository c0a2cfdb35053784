/**
 * An upstream redirecting its archives to a storage host: when that host fails, it is the one found down, not the
 * upstream that answered with the redirect. The upstream's own archives are still fetched; those on the storage host
 * fail at once (the upstream is asked, the storage host is not) until a probe finds it back. Real servers on
 * 127.0.0.1, the storage host behind a proxy that refuses connections.
 */
import { afterEach, expect, test } from 'bun:test'
import { makeZip, samplePack } from '../support/archives'
import { timed } from '../support/gone-upstream'
import { eventually } from '../support/eventually'
import { archiveOf, upstreamWithStorageHost, type StorageHostWorld } from '../support/storage-host'

let world: StorageHostWorld | undefined
afterEach(async () => {
  await world?.stop()
  world = undefined
})

const zipOf = (fill: number) => makeZip(samplePack([{ name: 'model.bin', data: new Uint8Array(5_000).fill(fill) }]))

test('a storage host that fails is found down, not the upstream: its own archives still come', async () => {
  const packs = { 'on-storage': zipOf(1), 'also-on-storage': zipOf(2), own: zipOf(3) }
  world = await upstreamWithStorageHost(packs, ['on-storage', 'also-on-storage'], { openMs: 1_000 })
  const { mirror, upstream, storage } = world
  storage.proxy.cut()

  const failed = await timed(mirror, archiveOf('on-storage'))
  expect(failed.res.status).toBe(502)
  expect(failed.body.message).toMatch(/the upstream has been unreachable since \S+Z; it is asked again in 1 s$/)
  expect(mirror.deps.mirror!.breaker.down().map((d) => d.host)).toEqual([storage.origin])
  const down = mirror.logs.map((l) => JSON.parse(l)).filter((l) => l.event === 'mirror.upstream_down')
  expect(down).toMatchObject([{ upstream: storage.origin }])

  // The upstream answered (with a redirect): it is up, and serves its own archives.
  const own = await timed(mirror, archiveOf('own'))
  expect(own.res.status).toBe(200)
  expect(own.body).toEqual(packs.own)

  // Another archive on the storage host: the upstream is asked, the storage host found down is not.
  const asked = upstream.requests.length
  const atOnce = await timed(mirror, archiveOf('also-on-storage'))
  expect(atOnce.res.status).toBe(502)
  expect(atOnce.ms).toBeLessThan(500)
  expect(upstream.requests.slice(asked)).toEqual([archiveOf('also-on-storage')])
  expect(storage.asked).toEqual([])

  // Back: after the open period the next download probes the storage host, and its archives come.
  storage.proxy.restore()
  await eventually(async () => (await timed(mirror, archiveOf('also-on-storage'))).res.status === 200, {
    what: 'the storage host probed and found back',
  })
  expect((await timed(mirror, archiveOf('on-storage'))).body).toEqual(packs['on-storage'])
  expect(mirror.deps.mirror!.breaker.down()).toEqual([])
}, 30_000)
