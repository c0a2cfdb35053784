/**
 * An upstream that keeps some archives on another host, as a registry on object storage does: a download of one of
 * those is answered 302 to a storage host with a presigned URL (credential and signature in its query). The storage
 * host is a server on 127.0.0.1 behind a TCP proxy, so a test can make it go; the mirror of the upstream is lazy.
 */
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from './app'
import { enableLazy, serveTestApp, sync, type ServedApp } from './mirror'
import { startTcpProxy, type TcpProxy } from './tcp-proxy'

/** What a presigned URL carries in its query: never to be shown in a log, a message or an answer. */
export const SECRET = 'c2VjcmV0LXNpZ25hdHVyZQ'

export const archiveOf = (node: string) => `/archives/acme/${node}/1.0.0/node.zip`

export interface StorageHostWorld {
  upstream: ServedApp
  mirror: TestApp
  /**
   * The storage host's origin (through its proxy), and the paths it was asked for; `intercept` answers instead of
   * it (a fault: an expired signature's 403).
   */
  storage: { origin: string; proxy: TcpProxy; asked: string[]; intercept?: (path: string) => Response | undefined }
  stop(): Promise<void>
}

/**
 * Each pack published upstream (node id to its archive, version 1.0.0 of publisher acme); those in `onStorage` are
 * served by the storage host, the upstream redirecting there. `lazy`: the mirror's client of first downloads.
 */
export async function upstreamWithStorageHost(
  packs: Record<string, Uint8Array>,
  onStorage: string[],
  lazy: Parameters<typeof enableLazy>[1] = {},
): Promise<StorageHostWorld> {
  const upstream = await serveTestApp()
  const { pat } = await aliceWithPublisher(upstream)
  for (const [node, bytes] of Object.entries(packs)) await publishActive(upstream, { pat, node, version: '1.0.0', bytes })
  const asked: string[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const { pathname } = new URL(req.url)
      asked.push(pathname)
      const fault = world.storage.intercept?.(pathname)
      if (fault) return fault
      const bytes = packs[pathname.replace(/^\/bucket\/|\.zip$/g, '')]
      return bytes ? new Response(bytes, { headers: { 'content-type': 'application/zip' } }) : new Response('no such key', { status: 404 })
    },
  })
  const proxy = startTcpProxy({ hostname: '127.0.0.1', port: server.port! })
  const origin = `http://127.0.0.1:${proxy.port}`
  upstream.intercept = (url) => {
    const node = onStorage.find((n) => url.pathname === archiveOf(n))
    if (!node) return undefined
    const presigned = `${origin}/bucket/${node}.zip?X-Amz-Credential=AKIAEXAMPLE%2F20260101&X-Amz-Signature=${SECRET}`
    return new Response(null, { status: 302, headers: { location: presigned } })
  }
  const mirror = await makeTestApp()
  enableLazy(mirror, lazy)
  await sync(mirror, upstream.url, { archives: 'lazy' })
  const world: StorageHostWorld = {
    upstream,
    mirror,
    storage: { origin, proxy, asked },
    async stop() {
      proxy.stop()
      server.stop(true)
      await upstream.stop()
      await mirror.cleanup()
    },
  }
  return world
}
