/**
 * An upstream that sends the mirror's first download of an archive to a cloud metadata service (by redirect, to a name
 * that resolves there) gets the downloader a 502, and the log says why; the service is never asked: the lazy client's
 * fetch fails the test for any host but 127.0.0.1, and names resolve through a table. The upstream itself is not
 * taken for down.
 */
import { afterEach, expect, test } from 'bun:test'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { enableLazy, serveTestApp, sync, type ServedApp } from '../support/mirror'

let upstream: ServedApp | undefined
let mirror: TestApp | undefined
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
})

test('a redirect to a metadata service: 502 upstream_failed, the reserved address logged, never asked', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: makeZip(samplePack()) })
  mirror = await makeTestApp()
  const asked: string[] = []
  const lazy = enableLazy(mirror, {
    attempts: 3,
    resolve: async (host) => (host === 'metadata.google.internal' ? ['169.254.169.254'] : []),
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      asked.push(new URL(String(input)).host)
      if (new URL(String(input)).hostname !== '127.0.0.1') throw new Error(`the test would have contacted ${String(input)}`)
      return fetch(input, init)
    }) as typeof fetch,
  })
  await sync(mirror, upstream.url, { archives: 'lazy' })
  const path = '/archives/acme/pack/1.0.0/node.zip'
  upstream.intercept = (url) =>
    url.pathname === path
      ? new Response(null, { status: 302, headers: { location: 'http://metadata.google.internal/computeMetadata/v1/?recursive=true' } })
      : undefined

  const res = await mirror.call('GET', path)
  expect(res.status).toBe(502)
  expect(res.body.error).toBe('upstream_failed')
  expect(res.body.message).toBe('this archive is not stored here yet, and the upstream could not provide it')
  const failed = mirror.logs.map((l) => JSON.parse(l)).filter((l) => l.event === 'mirror.archive_fetch_failed')
  expect(failed).toHaveLength(1)
  expect(failed[0].error).toContain('metadata.google.internal (169.254.169.254) is a reserved address')
  expect(asked).toEqual([new URL(upstream.url).host])
  expect(lazy.breaker.down()).toEqual([])
})
