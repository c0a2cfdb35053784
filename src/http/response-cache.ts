/**
 * Whole responses of the node lists, keyed by URL, bounded by bytes; gzip made once for clients that take it.
 * An answer stays while the index's matches are unchanged and none of the nodes it lists changed, so a write
 * drops only the answers it touches.
 */
import type { Context, MiddlewareHandler } from 'hono'
import type { CacheCounter } from '../metrics'
import { BoundedCache } from '../bounded-cache'

interface Cached {
  generation: number
  sequence: number
  ids: readonly string[]
  body: Uint8Array<ArrayBuffer>
  gzip?: Uint8Array<ArrayBuffer>
}

export const RESPONSE_CACHE_MAX_BYTES = 16 * 1024 * 1024
const ENTRY_OVERHEAD = 128

/** The nodes each answer lists, recorded by its handler (see listed()). */
const listedNodes = new WeakMap<Request, readonly string[]>()

/** Tells the cache which nodes this list answer shows; an answer that does not say is not kept. */
export function listed(c: Context, ids: readonly string[]): void {
  listedNodes.set(c.req.raw, ids)
}

export interface ListCacheOptions {
  /** Changes whenever any list's members or order may have changed (the search index's generation). */
  generation: () => number
  /** A sequence of changes to single nodes, and whether any of `ids` changed after a given point of it. */
  sequence: () => number
  changedAfter: (ids: readonly string[], sequence: number) => boolean
  /** False while answers are not final (the search index still warming; such requests count as neither hit nor miss). */
  enabled: () => boolean
  gzip: boolean
  maxBytes?: number
  counter?: CacheCounter
}

export function listResponseCache(opts: ListCacheOptions): MiddlewareHandler {
  const maxBytes = opts.maxBytes ?? RESPONSE_CACHE_MAX_BYTES
  /** Oldest out first; once nearly full, only answers asked for lately come in. */
  const cache = new BoundedCache<Cached>(maxBytes)
  const cost = (key: string, e: Cached) => key.length + e.body.byteLength + e.ids.length * 8 + ENTRY_OVERHEAD
  const current = (e: Cached) => e.generation === opts.generation() && !opts.changedAfter(e.ids, e.sequence)

  return async (c, next) => {
    if (c.req.method !== 'GET') return next()
    const wantsGzip = opts.gzip && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '')
    if (!opts.enabled()) {
      await next()
      if (wantsGzip && c.res.status === 200 && listedNodes.has(c.req.raw)) c.res = gzipped(gzipOf(await bytesOf(c.res)), c.res.headers)
      return
    }
    const key = c.req.url.slice(c.req.url.indexOf('/', 8))
    const hit = cache.get(key)
    if (hit && current(hit)) {
      opts.counter?.hit()
      const headers: Record<string, string> = { 'content-type': 'application/json', vary: 'Accept-Encoding' }
      if (!wantsGzip) return c.body(hit.body, 200, headers)
      const gzip = hit.gzip ?? gzipOf(hit.body)
      if (!hit.gzip && cache.grow(key, gzip.byteLength)) hit.gzip = gzip
      return c.body(gzip, 200, { ...headers, 'content-encoding': 'gzip' })
    }
    if (hit) cache.delete(key)
    opts.counter?.miss()
    // Kept under the generation and sequence it was computed from: a write landing meanwhile makes it stale.
    const generation = opts.generation()
    const sequence = opts.sequence()
    await next()
    const ids = listedNodes.get(c.req.raw)
    if (c.res.status !== 200 || !ids) return
    c.res.headers.set('vary', 'Accept-Encoding')
    // Asked for the first time once the cache is nearly full (most distinct searches): not copied to be kept.
    const admitted = cache.admits(key)
    if (!admitted && !wantsGzip) return
    const entry: Cached = { generation, sequence, ids, body: await bytesOf(c.res) }
    if (wantsGzip) {
      entry.gzip = gzipOf(entry.body)
      c.res = gzipped(entry.gzip, c.res.headers)
    } else c.res = new Response(entry.body, { status: 200, headers: c.res.headers })
    if (admitted) cache.set(key, entry, cost(key, entry) + (entry.gzip?.byteLength ?? 0))
  }
}

const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer())

const gzipOf = (body: Uint8Array<ArrayBuffer>) => new Uint8Array(Bun.gzipSync(body))

/** The answer as gzip, for a client that takes it: a first ask too, not only the answers kept. */
function gzipped(gzip: Uint8Array<ArrayBuffer>, headers: Headers): Response {
  const res = new Response(gzip, { status: 200, headers })
  res.headers.set('content-encoding', 'gzip')
  res.headers.set('vary', 'Accept-Encoding')
  res.headers.delete('content-length')
  return res
}
