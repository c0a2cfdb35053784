/**
 * A body that fails after the upstream answered (trickling below the pace, stalling, cut off) is that transfer's
 * failure, not its host's: the download says the upstream did not provide the archive, and the host's other archives
 * are still fetched (such a body found the host down, turning every other first download away). A real upstream on
 * 127.0.0.1 whose reply for one archive misbehaves.
 */
import { afterEach, expect, test } from 'bun:test'
import { randomPackZip } from '../support/archives'
import { timed } from '../support/gone-upstream'
import { lazilyMirrored, pacedArchive, type LazilyMirrored } from '../support/paced-archive'

let world: LazilyMirrored | undefined
afterEach(async () => {
  await world?.stop()
  world = undefined
})

const SLOW = '/archives/acme/slow/1.0.0/node.zip'
const OTHER = '/archives/acme/other/1.0.0/node.zip'

/** `bytes` 512 at a time, one every 50 ms: some 10 KB a second, never a pause as long as the timeout. */
function trickle(bytes: Uint8Array): Response {
  let at = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await Bun.sleep(50)
      controller.enqueue(bytes.slice(at, (at += 512)))
      if (at >= bytes.byteLength) controller.close()
    },
  })
  return new Response(body, { headers: { 'content-type': 'application/zip', 'content-length': String(bytes.byteLength) } })
}

/** One chunk, then nothing: the body stalls. */
function stall(bytes: Uint8Array): Response {
  let sent = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent) return new Promise<void>(() => {}) // never another chunk
      sent = true
      controller.enqueue(bytes.slice(0, 1000))
    },
  })
  return new Response(body, { headers: { 'content-type': 'application/zip', 'content-length': String(bytes.byteLength) } })
}

const bodies: [string, (bytes: Uint8Array) => Response, number][] = [
  ['trickling below the pace', trickle, 504],
  ['stalling', stall, 504],
  ['cut off', (bytes) => pacedArchive(bytes, 10, { failAfter: 1 }), 502],
]

for (const [what, reply, status] of bodies) {
  test(`a body ${what}: that download fails, the host is not found down, its other archives come`, async () => {
    const packs = { slow: randomPackZip(200_000), other: randomPackZip(5_000) }
    world = await lazilyMirrored(packs, { timeoutMs: 250 })
    const { upstream, mirror } = world
    upstream.intercept = (url) => (url.pathname === SLOW ? reply(packs.slow) : undefined)

    const failed = await timed(mirror, SLOW)
    expect(failed.res.status).toBe(status)
    expect(failed.body.message).toStartWith('this archive is not stored here yet, and the upstream')
    expect(failed.body.message).not.toContain('since') // not "has been timing out since ..."
    expect(mirror.deps.mirror!.breaker.down()).toEqual([])
    expect(mirror.logs.some((l) => l.includes('mirror.upstream_down'))).toBe(false)

    const other = await timed(mirror, OTHER)
    expect(other.res.status).toBe(200)
    expect(other.body).toEqual(packs.other)
  }, 30_000)
}
