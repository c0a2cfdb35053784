/**
 * CORS: preflights answered by Hono's middleware; on every other request the same headers set on the final
 * response once it is made. Hono's middleware sets them before the route runs, which makes a placeholder response
 * that the route's own response is then copied over (a new Response and every header again): a fifth of the CPU of
 * an archive download.
 */
import type { MiddlewareHandler } from 'hono'
import { cors as honoCors } from 'hono/cors'

type CorsOptions = NonNullable<Parameters<typeof honoCors>[0]> & { origin: string | string[]; exposeHeaders: string[] }

export function cors(opts: CorsOptions): MiddlewareHandler {
  const preflight = honoCors(opts)
  const expose = opts.exposeHeaders.join(',')
  const anyOrigin = opts.origin === '*'
  const origins = typeof opts.origin === 'string' ? [opts.origin] : opts.origin
  const allowed = (origin: string) => (anyOrigin ? '*' : origins.includes(origin) ? origin : undefined)
  return async (c, next) => {
    if (c.req.method === 'OPTIONS') return preflight(c, next)
    const allowOrigin = allowed(c.req.header('origin') ?? '')
    await next()
    let headers = c.res.headers
    try {
      if (allowOrigin) headers.set('Access-Control-Allow-Origin', allowOrigin)
    } catch {
      c.res = new Response(c.res.body, c.res) // a response with immutable headers (one passed through from fetch)
      headers = c.res.headers
      if (allowOrigin) headers.set('Access-Control-Allow-Origin', allowOrigin)
    }
    headers.set('Access-Control-Expose-Headers', expose)
    if (!anyOrigin) headers.append('Vary', 'Origin')
  }
}

/**
 * The registry's CORS: `corsOrigin` is `--cors-origin` (a comma-separated list, or `*`, the default). The app and
 * the answers given while it starts use it alike, so that a browser reads a 503 `starting` instead of a CORS error.
 */
export function registryCors(corsOrigin = '*'): MiddlewareHandler {
  const origins = corsOrigin.split(',').map((o) => o.trim())
  return cors({
    origin: origins.includes('*') ? '*' : origins,
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
    allowHeaders: [
      'Authorization',
      'Content-Type',
      'Cache-Control',
      'Pragma',
      'Expires',
      'X-API-KEY',
      'Range',
      'If-None-Match',
      'X-Request-Id',
    ],
    exposeHeaders: ['ETag', 'Content-Length', 'Content-Range', 'Accept-Ranges', 'Retry-After', 'X-Request-Id', 'X-Mirror-Upstream'],
    maxAge: 600,
  })
}
