/** A publisher's nodes: create, list (v2), edit, delete, delete a version, permissions, and claim-my-node. */
import { Hono } from 'hono'
import * as v from 'valibot'
import { NODE_STATUS, NodePageSchema, NodeSchema } from '../domain/wire'
import { claimNode } from '../services/claims'
import type { Deps } from '../services/deps'
import { publisherNodePage } from '../services/node-lists'
import { jsonText } from './json-body'
import { createNode, deleteNode, deleteVersion, editNode, nodePermissions } from '../services/publisher-nodes'
import { defined, strList } from './fields'
import type { Env } from './identity'
import { NodeBody, nodeEntries, nodeFields } from './node-body'
import { route } from './route-spec'
import { nodeStatusOf } from './status-names'
import { q } from './validate'
import { MAX_STORED_INT, MIN_STORED_INT } from '../domain/stored-int'

const RANKING_RANGE = `must be an integer from ${MIN_STORED_INT} to ${MAX_STORED_INT}`

const PermissionSchema = v.object({ canEdit: v.boolean() })

/** A host token: visible ASCII only (it goes into a header), bounded. */
const hostToken = v.nullish(
  v.pipe(
    v.string('must be a string'),
    v.trim(),
    v.maxLength(1000, 'must be at most 1000 characters'),
    v.regex(/^[\x21-\x7e]*$/, 'must be a token (visible ASCII characters only)'),
  ),
)

/** What the front end's edit screens send; status, publisher, search_ranking and tags_admin count for admins only. */
const NodeEditBody = v.object({
  ...nodeEntries,
  status: v.nullish(
    v.pipe(
      v.string('must be a NodeStatus'),
      v.check(
        (s) => nodeStatusOf(s) === 'active' || nodeStatusOf(s) === 'banned',
        `must be ${NODE_STATUS.active} or ${NODE_STATUS.banned}`,
      ),
      v.transform((s) => nodeStatusOf(s) as 'active' | 'banned'),
    ),
  ),
  publisher: v.nullish(v.object({ id: v.pipe(v.string('must be a string'), v.maxLength(64)) }, 'must be an object with the publisher id')),
  search_ranking: v.nullish(
    v.pipe(
      v.number('must be an integer'),
      v.safeInteger('must be an integer'),
      v.minValue(MIN_STORED_INT, RANKING_RANGE),
      v.maxValue(MAX_STORED_INT, RANKING_RANGE),
    ),
  ),
  tags_admin: strList(50, 100),
})

const specs = {
  create: route({
    summary: 'Create a node without a version (owners and members)',
    tag: 'publishers',
    auth: 'bearer',
    body: NodeBody,
    status: 201,
    response: NodeSchema,
  }),
  list: route({
    summary: "A publisher's nodes, paged, in the shape of the other node lists",
    tag: 'publishers',
    auth: 'public',
    query: v.object({ page: q.int(1, 1), limit: q.int(1, 10), include_banned: q.bool }),
    response: NodePageSchema,
  }),
  edit: route({
    summary: "Edit a node's metadata (owners and members; admins may also set status, publisher, search_ranking and tags_admin)",
    tag: 'publishers',
    auth: 'bearer',
    body: NodeEditBody,
    response: NodeSchema,
  }),
  delete: route({
    summary: 'Delete a node (soft: gone from reads and search, its id stays taken)',
    tag: 'publishers',
    auth: 'bearer',
    status: 204,
  }),
  deleteVersion: route({
    summary: 'Delete a version (soft: its version string stays taken; latest_version and install move on)',
    tag: 'publishers',
    auth: 'bearer',
    status: 204,
  }),
  permissions: route({ summary: 'Whether the caller may edit this node', tag: 'publishers', auth: 'bearer', response: PermissionSchema }),
  claim: route({
    summary: 'Claim a node of the unclaimed publisher into this publisher, proving ownership of its repository (owners)',
    description:
      'REPOHOST_TOKEN (or GH_TOKEN) is a token of the source-code host (--repohost-api-url) whose user administers the repository named by the node. It is used for the check and never stored.',
    tag: 'publishers',
    auth: 'bearer',
    body: v.object({ REPOHOST_TOKEN: hostToken, GH_TOKEN: hostToken }),
    status: 204,
  }),
}

export function publisherNodeRoutes(deps: Deps) {
  const app = new Hono<Env>()

  app.post('/:publisherId/nodes', specs.create, async (c) => {
    const body = nodeFields(await specs.create.body(c))
    return c.json(await createNode(deps, c.var.actor, c.req.param('publisherId'), body), 201)
  })

  app.get('/:publisherId/nodes/v2', specs.list, async (c) => {
    const query = specs.list.query(c)
    const opts = { includeBanned: query.include_banned ?? false, page: query.page, limit: query.limit }
    return jsonText(await publisherNodePage(deps, c.req.param('publisherId'), opts))
  })

  app.put('/:publisherId/nodes/:nodeId', specs.edit, async (c) => {
    const { status, publisher, search_ranking, tags_admin, ...node } = await specs.edit.body(c)
    const admin = defined({ status, publisherId: publisher?.id, search_ranking, tags_admin })
    const { publisherId, nodeId } = c.req.param()
    return c.json(await editNode(deps, c.var.actor, { publisherId, nodeId }, { ...nodeFields(node), ...admin }))
  })

  app.delete('/:publisherId/nodes/:nodeId', specs.delete, async (c) => {
    await deleteNode(deps, c.var.actor, c.req.param())
    return c.body(null, 204)
  })

  app.delete('/:publisherId/nodes/:nodeId/versions/:versionId', specs.deleteVersion, async (c) => {
    await deleteVersion(deps, c.var.actor, c.req.param())
    return c.body(null, 204)
  })

  app.get('/:publisherId/nodes/:nodeId/permissions', specs.permissions, async (c) =>
    c.json(await nodePermissions(deps, c.var.actor, c.req.param())),
  )

  app.post('/:publisherId/nodes/:nodeId/claim-my-node', specs.claim, async (c) => {
    const body = await specs.claim.body(c)
    await claimNode(deps, c.var.actor, c.req.param(), body.REPOHOST_TOKEN || body.GH_TOKEN || undefined)
    return c.body(null, 204)
  })

  return app
}
