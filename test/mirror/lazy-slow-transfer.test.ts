/**
 * A download waits a bounded time for its archive's fetch, whatever the upstream does: a transfer slow but steady
 * (within the pace, so not a failure) past 4 timeouts answers 504 saying it is still being fetched, and the fetch
 * goes on, so a later download finds the archive stored, fetched once.
 */
import { afterEach, expect, test } from 'bun:test'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { eventually } from '../support/eventually'
import { timed } from '../support/gone-upstream'
import { enableLazy, serveTestApp, sync, type ServedApp } from '../support/mirror'

let upstream: ServedApp | undefined
let mirror: TestApp | undefined
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
  upstream = mirror = undefined
})

/** The bytes in 32 KiB chunks, one every `everyMs`. */
function slowly(bytes: Uint8Array, everyMs: number): Response {
  let at = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await Bun.sleep(everyMs)
      controller.enqueue(bytes.slice(at, at + 32 * 1024))
      at += 32 * 1024
      if (at >= bytes.byteLength) controller.close()
    },
  })
  return new Response(body, { headers: { 'content-type': 'application/zip', 'content-length': String(bytes.byteLength) } })
}

test('a slow but steady first download: 504 "still being fetched" after 4 timeouts, then served, fetched once', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  const zip = makeZip(samplePack([{ name: 'model.bin', data: crypto.getRandomValues(new Uint8Array(1_000_000)) }]))
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: zip })
  mirror = await makeTestApp()
  enableLazy(mirror, { timeoutMs: 250 }) // a download waits 1 s
  await sync(mirror, upstream.url, { archives: 'lazy' })
  upstream.intercept = (url) => (url.pathname.startsWith('/archives/') ? slowly(zip, 60) : undefined) // some 2 s in all
  const path = '/archives/acme/pack/1.0.0/node.zip'
  const first = await timed(mirror, path)
  expect(first.res.status).toBe(504)
  expect(first.body).toEqual({
    error: 'upstream_timeout',
    message: 'this archive is not stored here yet, and the upstream has not sent all of it within 1 s; it is still being fetched',
  })
  expect(first.res.headers.get('retry-after')).toBe('1')
  expect(first.ms).toBeLessThan(1_900)
  await eventually(async () => (await timed(mirror!, path)).res.status === 200, { what: 'the archive stored' })
  expect((await timed(mirror, path)).body).toEqual(zip)
  expect(upstream.requests.filter((p) => p === path)).toHaveLength(1)
}, 30_000)

test('a transfer that fails after its download stopped waiting ends alone: the next download fetches it again', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  const zip = makeZip(samplePack([{ name: 'model.bin', data: crypto.getRandomValues(new Uint8Array(1_000_000)) }]))
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: zip })
  mirror = await makeTestApp()
  // A download waits 1 s; a host found failing is asked again at once (the breaker is not what this is about).
  enableLazy(mirror, { timeoutMs: 250, attempts: 1, openMs: 1 })
  await sync(mirror, upstream.url, { archives: 'lazy' })
  let cut = true
  upstream.intercept = (url) => {
    if (!url.pathname.startsWith('/archives/') || !cut) return undefined
    // Steady for some 1.5 s, past the download's wait, then the connection goes.
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await Bun.sleep(60)
        // An error, not an early close: Bun's server would send a closed stream as a complete chunked body.
        if (sent === 25) return controller.error(new Error('(expected) the test cuts this transfer short'))
        controller.enqueue(zip.slice(sent * 32 * 1024, ++sent * 32 * 1024))
      },
    })
    return new Response(body, { headers: { 'content-type': 'application/zip', 'content-length': String(zip.byteLength) } })
  }
  const path = '/archives/acme/pack/1.0.0/node.zip'
  expect((await timed(mirror, path)).res.status).toBe(504)
  // Nobody waits on the fetch now: its failure must end it quietly (an unhandled rejection would fail this run).
  await eventually(async () => !mirror!.deps.mirror?.inflight.size, { what: 'the failed fetch ended' })
  cut = false
  const again = await timed(mirror, path)
  expect({ status: again.res.status, body: again.body }).toMatchObject({ status: 200 })
  expect(again.body).toEqual(zip)
}, 30_000)
