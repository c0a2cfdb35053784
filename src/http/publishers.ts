/** Publisher routes: create, list, read, update, the id check, a publisher's nodes, and its tokens. */
import { Hono } from 'hono'
import * as v from 'valibot'
import type { Deps } from '../services/deps'
import { listPublisherNodes } from '../services/node-lists'
import { createPublisherToken, deleteToken, listTokens } from '../services/publisher-tokens'
import {
  allPublishersJson,
  createPublisher,
  deletePublisher,
  getPublisher,
  publisherPermissions,
  updatePublisherFields,
  validatePublisherId,
} from '../services/publishers'
import type { Env } from './identity'
import { defined, httpUrlOrEmpty, str } from './fields'
import { route } from './route-spec'
import { q } from './validate'
import { NodeSchema, PublisherSchema } from '../domain/wire'

const PublisherBody = v.object({
  id: str(64),
  name: str(200),
  description: str(5000),
  website: httpUrlOrEmpty(2000),
  support: str(2000),
  source_code_repo: httpUrlOrEmpty(2000),
  logo: httpUrlOrEmpty(2000),
})

const TokenSchema = v.object({ id: v.string(), name: v.string(), description: v.string(), createdAt: v.string(), token: v.string() })

const specs = {
  list: route({
    summary: 'List publishers (banned ones to admins only)',
    tag: 'publishers',
    auth: 'optional',
    response: v.array(PublisherSchema),
  }),
  create: route({
    summary: 'Create a publisher; the caller becomes its owner',
    tag: 'publishers',
    auth: 'bearer',
    body: PublisherBody,
    status: 201,
    response: PublisherSchema,
  }),
  validate: route({
    summary: 'Check that a publisher id is available (400 saying why when it is not)',
    tag: 'publishers',
    auth: 'public',
    query: v.object({ username: q.text }),
    response: v.object({ isAvailable: v.boolean() }),
  }),
  read: route({
    summary: 'Read a publisher (member emails to its members and admins)',
    tag: 'publishers',
    auth: 'optional',
    response: PublisherSchema,
  }),
  update: route({
    summary: 'Update a publisher (owners)',
    tag: 'publishers',
    auth: 'bearer',
    body: PublisherBody,
    response: PublisherSchema,
  }),
  delete: route({
    summary: 'Delete a publisher that has no nodes left (owners; 409 otherwise); its id stays taken',
    tag: 'publishers',
    auth: 'bearer',
    status: 204,
  }),
  permissions: route({
    summary: 'Whether the caller may edit this publisher',
    tag: 'publishers',
    auth: 'bearer',
    response: v.object({ canEdit: v.boolean() }),
  }),
  nodes: route({
    summary: "A publisher's nodes",
    tag: 'publishers',
    auth: 'public',
    query: v.object({ page: q.int(1, 1), limit: q.int(1, 100), include_banned: q.bool }),
    response: v.array(NodeSchema),
  }),
  createToken: route({
    summary: 'Create a publisher token (owners; shown once)',
    tag: 'publishers',
    auth: 'bearer',
    body: v.object({ name: str(200), description: str(2000) }),
    status: 201,
    response: v.object({ token: v.string() }),
  }),
  listTokens: route({
    summary: "List a publisher's tokens, masked (owners)",
    tag: 'publishers',
    auth: 'bearer',
    response: v.array(TokenSchema),
  }),
  deleteToken: route({ summary: 'Delete a publisher token (owners)', tag: 'publishers', auth: 'bearer', status: 204 }),
}

export function publisherRoutes(deps: Deps) {
  const app = new Hono<Env>()

  app.get('/', specs.list, async (c) => c.body(await allPublishersJson(deps, c.var.actor), 200, { 'content-type': 'application/json' }))

  app.post('/', specs.create, async (c) => {
    const body = defined(await specs.create.body(c))
    return c.json(await createPublisher(deps, c.var.actor, body), 201)
  })

  app.get('/validate', specs.validate, async (c) => c.json(await validatePublisherId(deps, specs.validate.query(c).username)))

  app.get('/:publisherId', specs.read, async (c) => c.json(await getPublisher(deps, c.var.actor, c.req.param('publisherId'))))

  app.put('/:publisherId', specs.update, async (c) => {
    const body = defined(await specs.update.body(c))
    return c.json(await updatePublisherFields(deps, c.var.actor, c.req.param('publisherId'), body))
  })

  app.delete('/:publisherId', specs.delete, async (c) => {
    await deletePublisher(deps, c.var.actor, c.req.param('publisherId'))
    return c.body(null, 204)
  })

  app.get('/:publisherId/permissions', specs.permissions, async (c) =>
    c.json(await publisherPermissions(deps, c.var.actor, c.req.param('publisherId'))),
  )

  app.get('/:publisherId/nodes', specs.nodes, async (c) => {
    const query = specs.nodes.query(c)
    const opts = { includeBanned: query.include_banned ?? false, page: query.page, limit: query.limit }
    return c.json(await listPublisherNodes(deps, c.req.param('publisherId'), opts))
  })

  app.post('/:publisherId/tokens', specs.createToken, async (c) => {
    const body = defined(await specs.createToken.body(c))
    return c.json(await createPublisherToken(deps, c.var.actor, c.req.param('publisherId'), body), 201)
  })

  app.get('/:publisherId/tokens', specs.listTokens, async (c) => c.json(await listTokens(deps, c.var.actor, c.req.param('publisherId'))))

  app.delete('/:publisherId/tokens/:tokenId', specs.deleteToken, async (c) => {
    await deleteToken(deps, c.var.actor, c.req.param('publisherId'), c.req.param('tokenId'))
    return c.body(null, 204)
  })

  return app
}
