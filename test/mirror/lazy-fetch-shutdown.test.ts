/**
 * `serve` stopping while an archive is fetched on first download: its mirroring ends the transfer at once (nobody
 * waits for it any more), leaving no staged bytes and no blob intent behind; the download that asked is answered.
 */
import { afterEach, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { startMirroring } from '../../src/serve-mirror'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { eventually } from '../support/eventually'
import { serveTestApp, sync, type ServedApp } from '../support/mirror'

let upstream: ServedApp | undefined
let mirror: TestApp | undefined
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
  upstream = mirror = undefined
})

test('stopping serve mid-fetch ends the transfer at once: nothing staged, no intent left, the download answered', async () => {
  upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  const zip = makeZip(samplePack([{ name: 'model.bin', data: crypto.getRandomValues(new Uint8Array(2_000_000)) }]))
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: zip })
  mirror = await makeTestApp()
  await sync(mirror, upstream.url, { archives: 'lazy' })
  // 32 KiB every 100 ms: steady (within the pace), and some 6 s in all.
  let chunksSent = 0
  upstream.intercept = (url) => {
    if (!url.pathname.startsWith('/archives/')) return undefined
    let at = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await Bun.sleep(100)
        controller.enqueue(zip.slice(at, at + 32 * 1024))
        chunksSent++
        at += 32 * 1024
        if (at >= zip.byteLength) controller.close()
      },
    })
    return new Response(body, { headers: { 'content-type': 'application/zip', 'content-length': String(zip.byteLength) } })
  }
  const { config } = loadConfig({ flags: {}, env: {} })
  const mirroring = await startMirroring(mirror.deps, config!)
  const download = mirror.app.request('/archives/acme/pack/1.0.0/node.zip')
  await eventually(async () => chunksSent >= 3, { what: 'the transfer under way' })
  const stopped = performance.now()
  await mirroring.stop()
  const answer = await download
  expect(answer.status).toBeGreaterThanOrEqual(500)
  expect(((await answer.json()) as { error: string }).error).toBeString()
  expect(performance.now() - stopped).toBeLessThan(2_000)
  const sentAtStop = chunksSent
  await Bun.sleep(500)
  // The upstream is asked for nothing more once the stop has gone through (a chunk in flight may still land).
  expect(chunksSent - sentAtStop).toBeLessThanOrEqual(1)
  expect(chunksSent).toBeLessThan(Math.ceil(zip.byteLength / (32 * 1024)))
  await eventually(async () => readdirSync(join(mirror!.dir, 'tmp')).length === 0, { what: 'the staged bytes removed' })
  expect(await mirror.deps.db.selectFrom('blob_intents').selectAll().execute()).toEqual([])
}, 30_000)
