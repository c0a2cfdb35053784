/**
 * createApp(deps): the whole HTTP surface. CORS and the access log apply everywhere; each route group takes
 * the rest of what it needs: the registry API resolves the caller and limits JSON bodies, the archive routes
 * stream their own bodies under their own limit, the operations routes need neither.
 */
import { Hono, type MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { cors } from 'hono/cors'
import { ARCHIVE_PREFIX } from '../domain/urls'
import { notFound, payloadTooLarge } from '../errors'
import type { Log } from '../log'
import type { Deps } from '../services/deps'
import { archiveRoutes } from './archives'
import { changeRoutes } from './changes'
import { renderAppError, renderError } from './errors'
import { identity, type Env } from './identity'
import { bulkRoutes, hostNodeRoutes, nodeRoutes } from './nodes'
import { openApiDocument } from './openapi'
import { publishRoutes } from './publish'
import { publisherRoutes } from './publishers'
import { systemRoutes } from './system'
import { userRoutes } from './users'

const JSON_BODY_LIMIT = 1024 * 1024

/** Method, path (never the query: signed URLs carry their signature there), status, duration. */
function accessLog(log: Log): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now()
    await next()
    log.info('request', {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    })
  }
}

const jsonBodyLimit = bodyLimit({
  maxSize: JSON_BODY_LIMIT,
  onError: () => {
    throw payloadTooLarge(`request bodies are limited to ${JSON_BODY_LIMIT} bytes`)
  },
})

export interface AppOptions {
  corsOrigin?: string
  /** Compress node lists for clients that accept gzip. */
  gzip?: boolean
}

export function createApp(deps: Deps, opts: AppOptions = {}) {
  const app = new Hono<Env>({ strict: false })
  const origins = (opts.corsOrigin ?? '*').split(',').map((o) => o.trim())
  app.onError(renderError(deps.log))
  app.notFound((c) => renderAppError(c, notFound(`No route for ${c.req.method} ${c.req.path}`)))
  app.use(accessLog(deps.log))
  // A mirror says on every answer how fresh its data is: ok, stale, or its upstream unreachable.
  app.use(async (c, next) => {
    await next()
    const fresh = deps.mirror?.freshness()
    if (fresh) c.res.headers.set('X-Mirror-Upstream', fresh.state)
  })
  app.use(
    cors({
      origin: origins.includes('*') ? '*' : origins,
      allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      allowHeaders: ['Authorization', 'Content-Type', 'Cache-Control', 'Pragma', 'Expires', 'X-API-KEY', 'Range', 'If-None-Match'],
      exposeHeaders: ['ETag', 'Content-Length', 'Content-Range', 'Accept-Ranges', 'Retry-After', 'X-Mirror-Upstream'],
      maxAge: 600,
    }),
  )

  /** A registry API group: the caller resolved once, JSON bodies limited. */
  const api = (...routes: Hono<Env>[]) => {
    const group = new Hono<Env>().use(identity(deps), jsonBodyLimit)
    for (const r of routes) group.route('/', r)
    return group
  }

  app.route(
    '/',
    systemRoutes(deps, () => document),
  )
  app.route('/users', api(userRoutes(deps)))
  app.route('/publishers', api(publisherRoutes(deps), publishRoutes(deps)))
  app.route('/nodes', api(nodeRoutes(deps, { gzip: opts.gzip })))
  app.route('/bulk', api(bulkRoutes(deps)))
  app.route('/host-nodes', api(hostNodeRoutes(deps)))
  app.route('/comfy-nodes', api(hostNodeRoutes(deps)))
  app.route('/changes', changeRoutes(deps))
  app.route(ARCHIVE_PREFIX, archiveRoutes(deps))
  const document = openApiDocument(app, deps.settings.publicUrl)
  return app
}

export type App = ReturnType<typeof createApp>
