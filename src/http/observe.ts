/**
 * What every request leaves behind for operators: a request id (a proxy's well-formed X-Request-Id, else a new
 * one) sent back as X-Request-Id and carried by every log line written while the request runs, the access log
 * line, and the request counter and latency histogram by route template.
 */
import type { Context, MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import type { Log } from '../log'
import type { Metrics } from '../metrics'

/** An incoming id is kept only if it is this plain and short: it goes into every log line and back out as a header. */
export const REQUEST_ID = /^[A-Za-z0-9._:=-]{1,128}$/

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * The template of the route that answered ("/nodes/:nodeId"), never the path itself: the first matched route that
 * is not middleware (Hono dispatches in that order), or "unmatched". Deciding it from the match rather than from
 * the last handler run keeps a 413 of a group's body limit under the route it was meant for.
 */
export function routeLabel(c: Context): string {
  for (const r of matchedRoutes(c)) if (r.method !== 'ALL') return r.path
  return 'unmatched'
}

function setHeader(c: Context, name: string, value: string): void {
  try {
    c.res.headers.set(name, value)
  } catch {
    c.res = new Response(c.res.body, c.res) // a response with immutable headers (one passed through from fetch)
    c.res.headers.set(name, value)
  }
}

export function observe(deps: { log: Log; metrics: Metrics }): MiddlewareHandler<{ Variables: { requestId: string } }> {
  const { log, metrics } = deps
  return async (c, next) => {
    const started = performance.now()
    const incoming = c.req.header('x-request-id')
    const requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID()
    c.set('requestId', requestId)
    await log.within({ requestId }, async () => {
      await next()
      const seconds = (performance.now() - started) / 1000
      const method = METHODS.has(c.req.method) ? c.req.method : 'other'
      const route = routeLabel(c)
      const status = c.res.status
      metrics.httpRequests.inc({ method, route, status })
      metrics.httpDuration.observe({ method, route }, seconds)
      setHeader(c, 'X-Request-Id', requestId)
      // Method, path (never the query: signed URLs carry their signature there), status, duration.
      log.info('request', { method: c.req.method, path: c.req.path, status, ms: Math.round(seconds * 10_000) / 10 })
    })
  }
}
