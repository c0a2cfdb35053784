/** --archives=lazy: an archive is fetched on its first download, once for concurrent downloads, then kept. */
import { afterEach, describe, expect, test } from 'bun:test'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { dripping } from '../support/dripping'
import { enableLazy, serveTestApp, sync, type ServedApp } from '../support/mirror'

let upstream: ServedApp
let mirror: TestApp
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
})

describe('archives fetched on first download', () => {
  test('ten concurrent first downloads make one upstream fetch; the bytes are then kept and served offline', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    const zip = makeZip(samplePack([{ name: 'model.bin', data: crypto.getRandomValues(new Uint8Array(200_000)) }]))
    await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: zip })
    mirror = await makeTestApp()
    enableLazy(mirror)
    const summary = await sync(mirror, upstream.url, { archives: 'lazy' })
    expect(summary.archives.fetched).toBe(0)
    const install = (await mirror.call('GET', '/nodes/pack/install')).body
    expect(install.downloadUrl).toBe('http://registry.test/archives/acme/pack/1.0.0/node.zip')
    const responses = await Promise.all(Array.from({ length: 10 }, () => mirror.app.request('/archives/acme/pack/1.0.0/node.zip')))
    for (const res of responses) expect(new Uint8Array(await res.arrayBuffer())).toEqual(zip)
    expect(upstream.requests.filter((p) => p.startsWith('/archives/'))).toHaveLength(1)
    await upstream.stop()
    const offline = await mirror.app.request('/archives/acme/pack/1.0.0/node.zip')
    expect(new Uint8Array(await offline.arrayBuffer())).toEqual(zip)
  })

  test('an archive refused (other bytes than pinned) says so on every download, and is asked for again an hour later', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    const zip = makeZip(samplePack([{ name: 'model.bin', data: new Uint8Array(5_000).fill(1) }]))
    await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: zip })
    mirror = await makeTestApp()
    enableLazy(mirror, { attempts: 1 })
    await sync(mirror, upstream.url, { archives: 'lazy' }) // pins the announced SHA-256
    const path = '/archives/acme/pack/1.0.0/node.zip'
    const other = makeZip(samplePack([{ name: 'model.bin', data: new Uint8Array(5_000).fill(2) }]))
    upstream.intercept = (url) =>
      url.pathname === path ? new Response(other, { headers: { 'content-type': 'application/zip' } }) : undefined
    const first = await mirror.call('GET', path)
    expect(first.status).toBe(502)
    expect(first.body.error).toBe('archive_refused')
    expect(first.body.message).toMatch(/other bytes .* than the ones pinned .*; it is asked for again in 3600 s$/)
    expect(first.headers.get('retry-after')).toBe('3600')
    // Said again, not a bare 404 "no archive", and the upstream is not asked.
    mirror.clock.now = new Date(mirror.clock.now.getTime() + 10 * 60_000)
    const again = await mirror.call('GET', path)
    expect(again.status).toBe(502)
    expect(again.body.message).toBe(first.body.message.replace('3600 s', '3000 s'))
    expect(again.headers.get('retry-after')).toBe('3000')
    expect(upstream.requests.filter((p) => p === path)).toHaveLength(1)
    // An hour after the refusal the upstream, put right meanwhile, is asked again: served.
    upstream.intercept = undefined
    mirror.clock.now = new Date(mirror.clock.now.getTime() + 50 * 60_000)
    const fixed = await mirror.app.request(path)
    expect(fixed.status).toBe(200)
    expect(new Uint8Array(await fixed.arrayBuffer())).toEqual(zip)
    expect(upstream.requests.filter((p) => p === path)).toHaveLength(2)
  })

  test('a first download while the upstream is down is a 502 that says so (not a 500, not a hang)', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    await publishActive(upstream, { pat, node: 'pack', version: '1.0.0' })
    mirror = await makeTestApp()
    enableLazy(mirror, { attempts: 1 })
    await sync(mirror, upstream.url, { archives: 'lazy' })
    upstream.server.stop(true)
    const res = await mirror.call('GET', '/archives/acme/pack/1.0.0/node.zip')
    expect(res.status).toBe(502)
    expect(res.body.error).toBe('upstream_failed')
    expect(res.body.message).toMatch(
      /^this archive is not stored here yet, and the upstream has been unreachable since \S+Z; it is asked again in \d+ s$/,
    )
  })

  test('a first download whose upstream drips its bytes is a 504 within a bounded time (not a hang)', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    await publishActive(upstream, { pat, node: 'pack', version: '1.0.0' })
    mirror = await makeTestApp()
    enableLazy(mirror, { attempts: 2, timeoutMs: 200 })
    await sync(mirror, upstream.url, { archives: 'lazy' })
    upstream.intercept = (url) => (url.pathname.startsWith('/archives/') ? dripping('PK', 'application/zip') : undefined)
    const started = performance.now()
    const res = await mirror.call('GET', '/archives/acme/pack/1.0.0/node.zip')
    expect(res.status).toBe(504)
    expect(res.body.error).toBe('upstream_timeout')
    // The host answered: one slow body is not the host timing out for every other download.
    expect(res.body.message).toBe('this archive is not stored here yet, and the upstream did not provide it in time')
    expect(performance.now() - started).toBeLessThan(5_000)
  })

  test('metadata only (no --archives): mirrored versions have no downloadUrl here and are not installable', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    await publishActive(upstream, { pat, node: 'pack', version: '1.0.0' })
    mirror = await makeTestApp()
    enableLazy(mirror)
    await sync(mirror, upstream.url)
    expect((await mirror.call('GET', '/nodes/pack')).body.latest_version.downloadUrl).toBe('')
    expect((await mirror.call('GET', '/nodes/pack/install')).status).toBe(404)
  })
})
