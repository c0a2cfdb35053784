/**
 * A lazy fetch nobody waits on any more gives up its place to a download someone does wait on: an upstream sending
 * archives just within the pace held all of the client's places for hours, and every other first download waited
 * behind them. Without contention such a fetch goes on (a later download finds the archive stored).
 */
import { afterEach, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
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

/** 32 KiB every 50 ms (well within the pace) of bytes that never end, as long as the test runs. */
function endless(): Response {
  const chunk = new Uint8Array(32 * 1024).fill(1)
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await Bun.sleep(50)
      controller.enqueue(chunk)
    },
  })
  return new Response(body, { headers: { 'content-type': 'application/zip' } })
}

test('a download waited on takes the place of a fetch its download gave up on; that one is fetched again later', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  const slowZip = makeZip(samplePack([{ name: 'slow.bin', data: new Uint8Array(1000).fill(3) }]))
  const zip = makeZip(samplePack([{ name: 'model.bin', data: new Uint8Array(1000).fill(4) }]))
  await publishActive(upstream, { pat, node: 'slow', version: '1.0.0', bytes: slowZip })
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: zip })
  mirror = await makeTestApp()
  enableLazy(mirror, { timeoutMs: 250, concurrency: 1 }) // one place; a download waits 1 s
  await sync(mirror, upstream.url, { archives: 'lazy' })
  const slow = '/archives/acme/slow/1.0.0/node.zip'
  let endlessNow = true
  upstream.intercept = (url) => (url.pathname === slow && endlessNow ? endless() : undefined)
  expect((await timed(mirror, slow)).res.status).toBe(504) // given up on: the fetch goes on, holding the one place
  const waitedOn = await timed(mirror, '/archives/acme/pack/1.0.0/node.zip')
  expect(waitedOn.res.status).toBe(200)
  expect(waitedOn.body).toEqual(zip)
  expect(waitedOn.ms).toBeLessThan(900) // it waited its whole 1 s behind the endless one, and got a 504
  const givenUp = mirror.logs.map((l) => JSON.parse(l)).filter((l) => l.event === 'mirror.archive_fetch_given_up')
  expect(givenUp).toHaveLength(1)
  // The one given up on is fetched again by its next download.
  endlessNow = false
  const again = await timed(mirror, slow)
  expect(again.res.status).toBe(200)
  expect(again.body).toEqual(slowZip)
  expect(upstream.requests.filter((p) => p === slow)).toHaveLength(2)
  // What the one given up on had staged is gone, and so is its intent.
  expect(readdirSync(join(mirror.dir, 'tmp'))).toEqual([])
  expect(await mirror.deps.db.selectFrom('blob_intents').selectAll().execute()).toEqual([])
}, 30_000)

test('without a download waiting for its place, a fetch given up on by its download goes on to the end', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  const zip = makeZip(samplePack([{ name: 'model.bin', data: crypto.getRandomValues(new Uint8Array(300_000)) }]))
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: zip })
  mirror = await makeTestApp()
  enableLazy(mirror, { timeoutMs: 250, concurrency: 1 })
  await sync(mirror, upstream.url, { archives: 'lazy' })
  const path = '/archives/acme/pack/1.0.0/node.zip'
  // Some 2 s in all: 32 KiB every 200 ms.
  upstream.intercept = (url) => {
    if (url.pathname !== path) return undefined
    let at = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await Bun.sleep(200)
        controller.enqueue(zip.slice(at, (at += 32 * 1024)))
        if (at >= zip.byteLength) controller.close()
      },
    })
    return new Response(body, { headers: { 'content-type': 'application/zip', 'content-length': String(zip.byteLength) } })
  }
  expect((await timed(mirror, path)).res.status).toBe(504)
  await eventually(async () => (await timed(mirror!, path)).res.status === 200, { what: 'the archive stored' })
  expect((await timed(mirror, path)).body).toEqual(zip)
  expect(upstream.requests.filter((p) => p === path)).toHaveLength(1)
  expect(mirror.logs.some((l) => l.includes('mirror.archive_fetch_given_up'))).toBe(false)
}, 30_000)
