/**
 * Every place of the lazy client (one of its `concurrency` transfers at once) is freed within a bounded time, whatever
 * the upstream or the archive storage does: a body that stalls fails after one --sync-timeout without a chunk, and
 * so does a transfer whose bytes the storage stops taking (a disk write that never completes). Another
 * archive is then fetched; without the bound, one hung transfer per place stopped every first download for good.
 */
import { afterEach, expect, test } from 'bun:test'
import type { BlobStore } from '../../src/blobs/blob-store'
import { randomPackZip } from '../support/archives'
import { firstStaging } from '../support/first-staging'
import { timed } from '../support/gone-upstream'
import { lazilyMirrored, type LazilyMirrored } from '../support/paced-archive'

let world: LazilyMirrored | undefined
let release = () => {}
afterEach(async () => {
  release()
  await world?.stop()
  world = undefined
})

const HUNG = '/archives/acme/hung/1.0.0/node.zip'
const PACK = '/archives/acme/pack/1.0.0/node.zip'

/** Headers, the first 32 KiB of `bytes` (of a length announced whole), then nothing until the test ends. */
function stalledArchive(bytes: Uint8Array, until: Promise<void>): Response {
  let sent = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent) return until.then(() => controller.close())
      controller.enqueue(bytes.slice(0, 32 * 1024))
      sent = true
    },
  })
  return new Response(body, { headers: { 'content-type': 'application/zip', 'content-length': String(bytes.byteLength) } })
}

/** The store, except that its first staging reads one chunk and never returns (a hung disk). */
const firstWriteHangs = (store: BlobStore) =>
  firstStaging(store, async (body) => {
    await body.getReader().read()
    return new Promise<never>(() => {})
  })

/**
 * A download of HUNG takes the one place and is waited on (never given up for the next one); a download of PACK
 * meanwhile is served all the same. The answer to HUNG, once it comes.
 */
async function hungWhileOtherServed(mirror: LazilyMirrored['mirror'], pack: Uint8Array) {
  const hung = timed(mirror, HUNG)
  await Bun.sleep(100)
  const waiting = await timed(mirror, PACK)
  expect(waiting.res.status).toBe(200)
  expect(waiting.body).toEqual(pack)
  return hung
}

test('a body that stalls frees its place within its tries: the archive waiting for it is served', async () => {
  const packs = { hung: randomPackZip(100_000), pack: randomPackZip(1000) }
  world = await lazilyMirrored(packs, { timeoutMs: 250, concurrency: 1 }) // one place; a download waits 1 s
  const { upstream, mirror } = world
  const ended = new Promise<void>((resolve) => (release = resolve))
  upstream.intercept = (url) => (url.pathname === HUNG ? stalledArchive(packs.hung, ended) : undefined)

  const failed = await hungWhileOtherServed(mirror, packs.pack)
  expect(failed.res.status).toBe(504)
  expect(failed.body.message).toBe('this archive is not stored here yet, and the upstream did not provide it in time')
  // One try, stalled 250 ms: a retry would start past the tries' deadline (one --sync-timeout).
  expect(upstream.requests.filter((p) => p === HUNG)).toHaveLength(1)
}, 30_000)

test('a transfer the archive storage stops taking frees its place after one --sync-timeout: 503, then others served', async () => {
  const packs = { hung: randomPackZip(100_000), pack: randomPackZip(1000) }
  world = await lazilyMirrored(packs, { timeoutMs: 250, concurrency: 1 }) // one place; a download waits 1 s
  const { upstream, mirror } = world
  mirror.deps.blobs = firstWriteHangs(mirror.deps.blobs)

  const failed = await hungWhileOtherServed(mirror, packs.pack)
  expect(failed.res.status).toBe(503)
  expect(failed.body.error).toBe('storage_unavailable')
  expect(failed.ms).toBeLessThan(900)
  const logged = mirror.logs.map((l) => JSON.parse(l)).find((l) => l.event === 'mirror.archive_fetch_failed')
  expect(logged.error).toBe('the archive storage stalled: the bytes received were not taken within 250 ms (where they are written stalled)')
  // Not retried, and not the upstream's doing: its next download fetches it again at once.
  expect(upstream.requests.filter((p) => p === HUNG)).toHaveLength(1)
  expect(mirror.deps.mirror!.breaker.down()).toEqual([])
  const again = await timed(mirror, HUNG)
  expect(again.res.status).toBe(200)
  expect(again.body).toEqual(packs.hung)
}, 30_000)
