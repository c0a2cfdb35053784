/** createApp(deps): the whole HTTP surface, with CORS, body limits, the caller, access logs and error rendering. */
import { Hono, type MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { cors } from 'hono/cors'
import { payloadTooLarge } from '../errors'
import type { Log } from '../log'
import type { Deps } from '../services/deps'
import { ARCHIVE_PREFIX } from '../domain/urls'
import { archiveRoutes } from './archives'
import { type Env, resolveActor } from './context'
import { errorBody, renderError } from './errors'
import { bulkRoutes, hostNodeRoutes, nodeRoutes } from './nodes'
import { publisherRoutes } from './publishers'
import { publishRoutes } from './publish'
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

export interface AppOptions {
  corsOrigin?: string
  /** Compress node lists for clients that accept gzip. */
  gzip?: boolean
}

export function createApp(deps: Deps, opts: AppOptions = {}) {
  const app = new Hono<Env>({ strict: false })
  const origins = (opts.corsOrigin ?? '*').split(',').map((o) => o.trim())
  app.onError(renderError(deps.log))
  app.notFound((c) => c.json(errorBody('not_found', `No route for ${c.req.method} ${c.req.path}`), 404))
  app.use(accessLog(deps.log))
  app.use(
    cors({
      origin: origins.includes('*') ? '*' : origins,
      allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      allowHeaders: ['Authorization', 'Content-Type', 'Cache-Control', 'Pragma', 'Expires', 'X-API-KEY', 'Range', 'If-None-Match'],
      exposeHeaders: ['ETag', 'Content-Length', 'Content-Range', 'Accept-Ranges'],
      maxAge: 600,
    }),
  )
  app.use(async (c, next) => {
    if (c.req.path.startsWith(`${ARCHIVE_PREFIX}/`)) return next()
    return bodyLimit({
      maxSize: JSON_BODY_LIMIT,
      onError: () => {
        throw payloadTooLarge(`request bodies are limited to ${JSON_BODY_LIMIT} bytes`)
      },
    })(c, next)
  })
  app.use(resolveActor(deps))

  app.route('/', systemRoutes(deps))
  app.route('/users', userRoutes(deps))
  app.route('/publishers', publisherRoutes(deps))
  app.route('/publishers', publishRoutes(deps))
  app.route('/nodes', nodeRoutes(deps, { gzip: opts.gzip }))
  app.route('/bulk', bulkRoutes(deps))
  app.route('/host-nodes', hostNodeRoutes(deps))
  app.route('/comfy-nodes', hostNodeRoutes(deps))
  app.route(ARCHIVE_PREFIX, archiveRoutes(deps))
  return app
}

export type App = ReturnType<typeof createApp>
