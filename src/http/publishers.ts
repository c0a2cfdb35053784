/** Publisher routes: create, list, read, update, the id check, a publisher's nodes, and its tokens. */
import { Hono } from 'hono'
import * as v from 'valibot'
import type { Deps } from '../services/deps'
import { listPublisherNodes } from '../services/node-lists'
import { createPublisherToken, deleteToken, listTokens } from '../services/publisher-tokens'
import { createPublisher, getPublisher, listAllPublishers, updatePublisherFields, validatePublisherId } from '../services/publishers'
import type { Env } from './context'
import { defined, httpUrlOrEmpty, str } from './fields'
import { jsonBody, q, queryParams } from './validate'

const PublisherBody = v.object({
  id: str(64),
  name: str(200),
  description: str(5000),
  website: httpUrlOrEmpty(2000),
  support: str(2000),
  source_code_repo: httpUrlOrEmpty(2000),
  logo: httpUrlOrEmpty(2000),
})

const TokenBody = v.object({ name: str(200), description: str(2000) })

const PublisherNodesQuery = v.object({ page: q.int(1, 1), limit: q.int(1, 100), include_banned: q.bool })

export function publisherRoutes(deps: Deps) {
  const app = new Hono<Env>()

  app.get('/', async (c) => c.json(await listAllPublishers(deps, c.var.actor)))

  app.post('/', async (c) => {
    const body = defined(await jsonBody(c, PublisherBody))
    return c.json(await createPublisher(deps, c.var.actor, body), 201)
  })

  app.get('/validate', async (c) => c.json(await validatePublisherId(deps, c.req.query('username'))))

  app.get('/:publisherId', async (c) => c.json(await getPublisher(deps, c.var.actor, c.req.param('publisherId'))))

  app.put('/:publisherId', async (c) => {
    const body = defined(await jsonBody(c, PublisherBody))
    return c.json(await updatePublisherFields(deps, c.var.actor, c.req.param('publisherId'), body))
  })

  app.get('/:publisherId/nodes', async (c) => {
    const query = queryParams(c, PublisherNodesQuery)
    const opts = { includeBanned: query.include_banned ?? false, page: query.page, limit: query.limit }
    return c.json(await listPublisherNodes(deps, c.req.param('publisherId'), opts))
  })

  app.post('/:publisherId/tokens', async (c) => {
    const body = defined(await jsonBody(c, TokenBody))
    return c.json(await createPublisherToken(deps, c.var.actor, c.req.param('publisherId'), body), 201)
  })

  app.get('/:publisherId/tokens', async (c) => c.json(await listTokens(deps, c.var.actor, c.req.param('publisherId'))))

  app.delete('/:publisherId/tokens/:tokenId', async (c) => {
    await deleteToken(deps, c.var.actor, c.req.param('publisherId'), c.req.param('tokenId'))
    return c.body(null, 204)
  })

  return app
}
