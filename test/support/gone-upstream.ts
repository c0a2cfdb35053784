/**
 * A lazy mirror of a real upstream on 127.0.0.1 reached through a TCP proxy, so a test can make the upstream refuse
 * connections, swallow them, or come back. The lazy client waits as `serve` does (the real backoff between tries).
 */
import { makeZip, samplePack } from './archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from './app'
import { enableLazy, serveTestApp, sync, type ServedApp } from './mirror'
import { startTcpProxy, type TcpProxy } from './tcp-proxy'

/** Held by the mirror (fetched before the upstream goes), and not. */
export const HELD = '/archives/acme/held/1.0.0/node.zip'
export const MISSING = '/archives/acme/pack/1.0.0/node.zip'

export interface GoneUpstream {
  upstream: ServedApp
  proxy: TcpProxy
  mirror: TestApp
  held: Uint8Array
  zip: Uint8Array
  /** The mirror's view of the upstream's host (its origin, through the proxy). */
  host: string
  stop(): Promise<void>
}

/**
 * Two packs upstream, and a mirror of them (`into`, or a new app) synced lazily through the proxy, holding `held`
 * only. `timeoutMs` is its --sync-timeout, `openMs` how long a host found down is not asked.
 */
export async function lazyMirrorOfProxiedUpstream(opts: { timeoutMs: number; openMs?: number; into?: TestApp }): Promise<GoneUpstream> {
  const upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  const held = makeZip(samplePack([{ name: 'held.bin', data: new Uint8Array(1000).fill(7) }]))
  const zip = makeZip(samplePack([{ name: 'model.bin', data: crypto.getRandomValues(new Uint8Array(50_000)) }]))
  await publishActive(upstream, { pat, node: 'held', version: '1.0.0', bytes: held })
  await publishActive(upstream, { pat, node: 'pack', version: '1.0.0', bytes: zip })
  const proxy = startTcpProxy({ hostname: '127.0.0.1', port: upstream.server.port! })
  const mirror = opts.into ?? (await makeTestApp())
  enableLazy(mirror, { timeoutMs: opts.timeoutMs, attempts: 6, backoffMs: 500, sleep: Bun.sleep, openMs: opts.openMs })
  const host = `http://127.0.0.1:${proxy.port}`
  await sync(mirror, host, { archives: 'lazy' })
  const first = await mirror.app.request(HELD)
  if (first.status !== 200) throw new Error(`the held archive was not fetched: HTTP ${first.status}`)
  return {
    upstream,
    proxy,
    mirror,
    held,
    zip,
    host,
    async stop() {
      proxy.stop()
      await upstream.stop()
      if (!opts.into) await mirror.cleanup()
    },
  }
}

/** A request to the app, its body (JSON or bytes), and how long it took. */
export async function timed(t: TestApp, path: string) {
  const started = performance.now()
  const res = await t.app.request(path)
  // A JSON error body, or the bytes.
  const body: any = res.headers.get('content-type')?.includes('json') ? await res.json() : new Uint8Array(await res.arrayBuffer())
  return { res, body, ms: performance.now() - started }
}
