/** Whole responses of the node lists, keyed by URL, kept while nothing changed; gzip made once for clients that take it. */
import type { MiddlewareHandler } from 'hono'
import type { CacheCounter } from '../metrics'

interface Cached {
  generation: number
  body: Uint8Array<ArrayBuffer>
  gzip?: Uint8Array<ArrayBuffer>
}

const MAX_BYTES = 32 * 1024 * 1024

/**
 * `generation()` changes with every write that could alter a list; `enabled()` is false while answers
 * are not final (the search index still warming; such requests count as neither hit nor miss). `gzip` serves
 * compressed bytes to clients that accept them.
 */
export function listResponseCache(opts: {
  generation: () => number
  enabled: () => boolean
  gzip: boolean
  counter?: CacheCounter
}): MiddlewareHandler {
  const cache = new Map<string, Cached>()
  let bytes = 0
  const clear = () => {
    cache.clear()
    bytes = 0
  }
  return async (c, next) => {
    if (c.req.method !== 'GET' || !opts.enabled()) return next()
    const key = c.req.url.slice(c.req.url.indexOf('/', 8))
    const wantsGzip = opts.gzip && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '')
    const hit = cache.get(key)
    if (hit && hit.generation === opts.generation()) {
      opts.counter?.hit()
      const headers: Record<string, string> = { 'content-type': 'application/json', vary: 'Accept-Encoding' }
      if (!wantsGzip) return c.body(hit.body, 200, headers)
      hit.gzip ??= new Uint8Array(Bun.gzipSync(hit.body))
      return c.body(hit.gzip, 200, { ...headers, 'content-encoding': 'gzip' })
    }
    opts.counter?.miss()
    // Kept under the generation it was computed from: if a write landed meanwhile, it is never served.
    const generation = opts.generation()
    await next()
    if (c.res.status !== 200) return
    const body = new Uint8Array(await c.res.clone().arrayBuffer())
    if (bytes + body.byteLength > MAX_BYTES) clear()
    cache.set(key, { generation, body })
    bytes += body.byteLength
    c.res.headers.set('vary', 'Accept-Encoding')
  }
}
