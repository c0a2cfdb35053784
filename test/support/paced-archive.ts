/**
 * Lazy mirrors of archives that arrive slowly: an upstream serving packs and a mirror synced from it lazily, and
 * archive replies sent a chunk at a time (steady within the pace, cut short, or endless).
 */
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from './app'
import { enableLazy, serveTestApp, sync, type ServedApp } from './mirror'

const CHUNK = 32 * 1024

/**
 * `bytes` in 32 KiB chunks, one every `everyMs`, with their Content-Length; `failAfter` chunks, the connection goes
 * instead (an error: Bun's server sends a stream closed early as a complete chunked body). `endless`: the first chunk
 * again and again, with no length, as long as the reader reads. `onChunk` counts what was sent.
 */
export function pacedArchive(
  bytes: Uint8Array,
  everyMs: number,
  opts: { failAfter?: number; endless?: boolean; onChunk?: () => void } = {},
): Response {
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await Bun.sleep(everyMs)
      if (sent === opts.failAfter) return controller.error(new Error('(expected) the test cuts this transfer short'))
      const at = opts.endless ? 0 : sent * CHUNK
      controller.enqueue(bytes.slice(at, at + CHUNK))
      sent++
      opts.onChunk?.()
      if (!opts.endless && sent * CHUNK >= bytes.byteLength) controller.close()
    },
  })
  const length: Record<string, string> = opts.endless ? {} : { 'content-length': String(bytes.byteLength) }
  return new Response(body, { headers: { 'content-type': 'application/zip', ...length } })
}

export interface LazilyMirrored {
  upstream: ServedApp
  mirror: TestApp
  stop(): Promise<void>
}

/**
 * An upstream with each pack published (node id to its archive, version 1.0.0 of publisher acme), and a mirror of it
 * synced with `--archives=lazy`; `lazy`: the mirror's client of first downloads (none: the test makes its own).
 */
export async function lazilyMirrored(packs: Record<string, Uint8Array>, lazy?: Parameters<typeof enableLazy>[1]) {
  const upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  for (const [node, bytes] of Object.entries(packs)) await publishActive(upstream, { pat, node, version: '1.0.0', bytes })
  const mirror = await makeTestApp()
  if (lazy) enableLazy(mirror, lazy)
  await sync(mirror, upstream.url, { archives: 'lazy' })
  return {
    upstream,
    mirror,
    async stop() {
      await upstream.stop()
      await mirror.cleanup()
    },
  } satisfies LazilyMirrored
}
