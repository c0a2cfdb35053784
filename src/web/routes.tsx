/**
 * The web pages: `/` and everything under `/-/`, server-rendered with Hono's JSX renderer from the services (never
 * by calling the API over HTTP). Their own error page, and security headers that keep every request on this origin.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { jsxRenderer } from 'hono/jsx-renderer'
import { secureHeaders } from 'hono/secure-headers'
import * as v from 'valibot'
import { AppError, notFound } from '../errors'
import { describeError } from '../http/errors'
import { q, queryParams } from '../http/validate'
import type { Deps } from '../services/deps'
import { mirrorStatus } from '../services/mirror/provenance'
import { assetResponse } from './assets'
import { ClientsPage } from './clients-page'
import { ErrorPage, errorTitle } from './error-page'
import { isolated, paged } from './format'
import { layout } from './layout'
import { createLinks, PAGE_PREFIX } from './links'
import { loadNodeView, NodePage } from './node-page'
import { loadPublisherView, PublisherPage } from './publisher-page'
import { readSearch, Results, ResultsProblem, runSearch, SearchPage, searchTitle } from './search-page'

/** Scripts, styles, images, fetches and form posts from this origin only; no inline code, no framing. */
const pageHeaders: MiddlewareHandler = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'"],
    connectSrc: ["'self'"],
    formAction: ["'self'"],
    baseUri: ["'none'"],
    frameAncestors: ["'none'"],
  },
  // HTTPS and its duration are the business of the TLS proxy in front, when there is one.
  strictTransportSecurity: false,
  xFrameOptions: 'DENY',
  referrerPolicy: 'same-origin',
})

/** The query string without its parameters that hold nothing but spaces, or undefined when it has none. */
function withoutBlankParams(url: string): string | undefined {
  const params = new URL(url).searchParams
  const kept = [...params].filter(([, value]) => value.trim())
  if (kept.length === params.size) return undefined
  return kept.length ? `?${new URLSearchParams(kept)}` : ''
}

/** Which page of a publisher's nodes, or of a node's versions. */
const PageQuery = v.object({ page: q.int(1, 1) })

export function webRoutes(deps: Deps) {
  const links = createLinks(deps.settings.publicUrl)
  const app = new Hono()
  // Registered for the page paths only: a sub-app's `*` would reach every API route too.
  for (const path of ['/', PAGE_PREFIX, `${PAGE_PREFIX}/*`])
    app.use(path, pageHeaders, jsxRenderer(layout(links, () => mirrorStatus(deps), deps.now)))

  const renderError = (c: Context, error: AppError) => {
    c.status(error.status as 400)
    for (const [name, value] of Object.entries(error.headers)) c.header(name, value)
    return c.render(<ErrorPage error={error} links={links} />, { title: errorTitle(error) })
  }
  app.onError((err, c) => renderError(c, describeError(deps.log, err, c)))

  app.get('/', async (c) => {
    // Without the script the form sends its empty fields too (`?search=&supported_os=&…`): answered with the address
    // of the same search without them, so what is bookmarked or shared says only what was asked.
    const unblanked = withoutBlankParams(c.req.url)
    if (unblanked !== undefined) return c.redirect(links.home() + unblanked, 303)
    const query = readSearch(c)
    const found = await runSearch(deps, query)
    return c.render(<SearchPage found={found} links={links} query={query} />, {
      title: searchTitle(query),
      section: 'browse',
    })
  })

  // The results block alone, for the script that searches as the person types.
  app.get(`${PAGE_PREFIX}/results`, async (c) => {
    let query
    try {
      query = readSearch(c)
    } catch (err) {
      if (err instanceof AppError && err.status === 400) return c.html(<ResultsProblem message={err.message} />, 400)
      throw err
    }
    return c.html(<Results found={await runSearch(deps, query)} links={links} query={query} />)
  })

  app.get(`${PAGE_PREFIX}/nodes/:nodeId`, async (c) => {
    const { page } = queryParams(c, PageQuery)
    const view = await loadNodeView(deps, c.req.param('nodeId'), page)
    // Lookups ignore case; the page lives at the node's own spelling.
    if (view.node.id !== c.req.param('nodeId')) return c.redirect(links.node(view.node.id, page), 301)
    const { name, id } = view.node
    const title = name && name !== id ? `${isolated(name)} (${id})` : id
    return c.render(<NodePage view={view} links={links} />, { title: paged(title, page, 'versions page') })
  })

  app.get(`${PAGE_PREFIX}/publishers/:publisherId`, async (c) => {
    const { page } = queryParams(c, PageQuery)
    const view = await loadPublisherView(deps, c.req.param('publisherId'), page)
    return c.render(<PublisherPage view={view} links={links} />, { title: paged(`${isolated(view.publisher.name)} (publisher)`, page) })
  })

  app.get(`${PAGE_PREFIX}/clients`, (c) => c.render(<ClientsPage links={links} />, { title: 'Use with your clients', section: 'clients' }))

  app.get(`${PAGE_PREFIX}/assets/:name`, (c) => assetResponse(c.req.param('name')) ?? renderError(c, notFound('No such file')))

  app.get(PAGE_PREFIX, (c) => renderError(c, notFound(`No page at ${c.req.path}`)))
  app.get(`${PAGE_PREFIX}/*`, (c) => renderError(c, notFound(`No page at ${c.req.path}`)))
  return app
}
