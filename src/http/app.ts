/**
 * createApp(deps): the whole HTTP surface. Request ids, metrics and the access log (http/observe.ts), CORS and
 * the read-only guard apply everywhere; each route group takes the rest of what it needs: the registry API resolves the caller and limits JSON bodies, the archive routes
 * stream their own bodies under their own limit, the operations routes need neither, the video proxy and its
 * image staging resolve callers by bearer token or X-API-KEY and limit bodies per route, and the web pages
 * (src/web/) bring their own renderer, error page and security headers.
 */
import { Hono } from 'hono'
import { registryCors } from './cors'
import { ARCHIVE_PREFIX } from '../domain/urls'
import { STAGING_PREFIX } from '../services/staged-images'
import { addressHoldsNul } from '../domain/nul'
import { AppError, notFound } from '../errors'
import type { Deps } from '../services/deps'
import { archiveRoutes } from './archives'
import { JSON_BODY_LIMIT, limitBody } from './body-limit'
import { changeRoutes } from './changes'
import { imageStagingRoutes } from './image-staging'
import { videoRoutes } from './video'
import { observe } from './observe'
import { headLength } from './head'
import { renderAppError, renderError } from './errors'
import { identity, type Env } from './identity'
import { adminRoutes, publisherModerationRoutes } from './moderation'
import { bulkRoutes, hostNodeRoutes, nodeRoutes } from './nodes'
import { openApiDocument } from './openapi'
import { publishRoutes } from './publish'
import { publisherNodeRoutes } from './publisher-nodes'
import { publisherRoutes } from './publishers'
import { readOnlyGuard } from './read-only'
import { systemRoutes } from './system'
import { userRoutes } from './users'
import { webRoutes } from '../web/routes'
import { versionRoutes } from './versions'

const jsonBodyLimit = limitBody(JSON_BODY_LIMIT)

export interface AppOptions {
  corsOrigin?: string
  /** Compress node lists for clients that accept gzip. */
  gzip?: boolean
}

export function createApp(deps: Deps, opts: AppOptions = {}) {
  const app = new Hono<Env>({ strict: false })
  app.onError(renderError(deps.log))
  app.notFound((c) => {
    // The host application's other video nodes call paths we do not serve: they get the proxy's body too.
    if (/^\/(?:proxy|customers)\//.test(c.req.path)) c.set('errorBody', 'proxy')
    return renderAppError(c, notFound(`No route for ${c.req.method} ${c.req.path}`))
  })
  app.use(observe(deps))
  app.use(headLength)
  // Before any route reads the address: see domain/nul.ts.
  app.use(async (c, next) => {
    if (addressHoldsNul(c.req.url)) throw new AppError(400, 'bad_request', 'the address may not hold a NUL character (%00)')
    await next()
  })
  // A mirror says on every answer how fresh its data is: ok, stale, or its upstream unreachable.
  app.use(async (c, next) => {
    await next()
    const fresh = deps.mirror?.freshness()
    if (fresh) c.res.headers.set('X-Mirror-Upstream', fresh.state)
  })
  app.use(registryCors(opts.corsOrigin))
  // After CORS, so that preflights still answer and refusals carry CORS headers.
  app.use(readOnlyGuard(deps.settings))

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
  app.route('/publishers', api(publisherRoutes(deps), publishRoutes(deps), publisherNodeRoutes(deps), publisherModerationRoutes(deps)))
  app.route('/nodes', api(nodeRoutes(deps, { gzip: opts.gzip })))
  app.route('/versions', api(versionRoutes(deps)))
  app.route('/admin', api(adminRoutes(deps)))
  app.route('/bulk', api(bulkRoutes(deps)))
  app.route('/host-nodes', api(hostNodeRoutes(deps)))
  app.route('/comfy-nodes', api(hostNodeRoutes(deps)))
  app.route('/changes', changeRoutes(deps))
  app.route(ARCHIVE_PREFIX, archiveRoutes(deps))
  // The video proxy under its own name and the upstream's (the host application calls /proxy/vidu/...).
  app.route('/proxy/provider', videoRoutes(deps))
  app.route('/proxy/vidu', videoRoutes(deps))
  app.route(STAGING_PREFIX, imageStagingRoutes(deps))
  // The web pages: `/` and `/-/...`, which no API route can take.
  app.route('/', webRoutes(deps))
  const document = openApiDocument(app, deps.settings.publicUrl)
  return app
}

export type App = ReturnType<typeof createApp>
