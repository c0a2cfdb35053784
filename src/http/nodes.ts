/** Node routes: search and list, one node, its versions, install, reviews, host nodes, and the bulk version lookup. */
import { type Context, Hono } from 'hono'
import * as v from 'valibot'
import { NodePageSchema, NodeSchema, VersionSchema } from '../domain/wire'
import type { Deps } from '../services/deps'
import { nodePage } from '../services/node-lists'
import { bulkVersions, getHostNodeOwner, getNodeJsonText, getNodeVersion, getVersionHostNodes } from '../services/nodes'
import { createInstallLookup } from '../services/install-lookup'
import { createVersionListLookup } from '../services/version-list-lookup'
import { addReview } from '../services/reviews'
import type { Env } from './identity'
import { jsonText } from './json-body'
import { listed, listResponseCache } from './response-cache'
import { route } from './route-spec'
import { parseStatuses } from './status-names'
import { q, SEARCH_FILTERS } from './validate'

const FILTERS = {
  page: q.int(1, 1),
  limit: q.int(1, 10),
  ...SEARCH_FILTERS,
  include_banned: q.bool,
}

const ListQuery = v.object({
  ...FILTERS,
  node_id: q.many,
  timestamp: q.time,
})

const HostNodesSchema = v.object({ node_id: v.string(), version: v.string(), host_nodes: v.array(v.string()) })

const specs = {
  search: route({ summary: 'Search nodes', tag: 'nodes', auth: 'public', query: v.object(FILTERS), response: NodePageSchema }),
  list: route({
    summary: 'List nodes (also by repeated node_id, and changed since timestamp)',
    tag: 'nodes',
    auth: 'public',
    query: ListQuery,
    response: NodePageSchema,
  }),
  read: route({ summary: 'Read a node', tag: 'nodes', auth: 'public', response: NodeSchema }),
  install: route({
    summary: 'The version to install, with its downloadUrl (a GET counts a download, unless the registry is read-only)',
    tag: 'nodes',
    auth: 'optional',
    query: v.object({ version: q.text }),
    response: VersionSchema,
  }),
  versions: route({
    summary: 'List versions of a node, newest first',
    tag: 'nodes',
    auth: 'public',
    query: v.object({ statuses: q.many, include_status_reason: q.bool }),
    response: v.array(VersionSchema),
  }),
  version: route({ summary: 'Read a version', tag: 'nodes', auth: 'public', response: VersionSchema }),
  hostNodes: route({ summary: 'Host node class names a version provides', tag: 'nodes', auth: 'public', response: HostNodesSchema }),
  comfyNodes: route({
    summary: 'Host node class names, in the upstream shape',
    tag: 'nodes',
    auth: 'public',
    response: v.object({ comfy_nodes: v.array(v.object({ comfy_node_name: v.string() })), totalNumberOfPages: v.number() }),
  }),
  review: route({
    summary: 'Rate a node (one rating per user, or per client address when anonymous)',
    tag: 'nodes',
    auth: 'optional',
    query: v.object({
      star: v.pipe(
        v.string('is required once (1 to 5)'),
        v.regex(/^[1-5]$/, 'must be an integer from 1 to 5'),
        v.transform(Number),
        v.metadata({ openapi: { type: 'integer', minimum: 1, maximum: 5 } }),
      ),
    }),
    response: NodeSchema,
  }),
  hostNodeOwner: route({ summary: 'The node providing a host node class', tag: 'nodes', auth: 'public', response: NodeSchema }),
  bulk: route({
    summary: 'Look up many versions at once',
    tag: 'nodes',
    auth: 'public',
    safe: true,
    body: v.object({
      node_versions: v.pipe(
        v.array(
          v.object({ node_id: v.pipe(v.string(), v.maxLength(100)), version: v.pipe(v.string(), v.maxLength(100)) }),
          'must be a list of {node_id, version}',
        ),
        v.maxLength(500, 'must have at most 500 items'),
      ),
    }),
    response: v.object({
      node_versions: v.array(
        v.object({
          identifier: v.object({ node_id: v.string(), version: v.string() }),
          status: v.picklist(['success', 'not_found', 'error']),
          node_version: v.optional(VersionSchema),
          error_message: v.optional(v.string()),
        }),
      ),
    }),
  }),
}

function listParams(query: v.InferOutput<typeof ListQuery>, listing: boolean) {
  return {
    page: query.page,
    limit: query.limit,
    search: query.search || undefined,
    repositoryUrl: query.repository_url_search || undefined,
    hostNode: query.host_node_search || query.comfy_node_search || undefined,
    os: query.supported_os || undefined,
    accelerator: query.supported_accelerator || undefined,
    includeBanned: query.include_banned ?? false,
    nodeIds: listing ? query.node_id : undefined,
    changedSince: listing ? query.timestamp : undefined,
  }
}

export function nodeRoutes(deps: Deps, opts: { gzip?: boolean } = {}) {
  const app = new Hono<Env>()

  const cached = listResponseCache({
    generation: () => deps.search.generation(),
    sequence: () => deps.nodeJson.sequence,
    changedAfter: (ids, sequence) => deps.nodeJson.changedAfter(ids, sequence),
    enabled: () => deps.search.status().ready,
    gzip: opts.gzip ?? false,
    counter: deps.metrics.cache('list_response'),
  })
  const page = async (c: Context, params: Parameters<typeof nodePage>[1]) => {
    const found = await nodePage(deps, params)
    listed(c, found.ids)
    return jsonText(found.text)
  }
  app.get('/', specs.list, cached, async (c) => page(c, listParams(specs.list.query(c), true)))
  app.get('/search', specs.search, cached, async (c) => page(c, listParams(specs.search.query(c), false)))

  app.get('/:nodeId', specs.read, async (c) => jsonText(await getNodeJsonText(deps, c.req.param('nodeId'))))

  const install = createInstallLookup(deps)
  // A HEAD downloads nothing (link checkers and monitors send one): it answers as the GET would, uncounted.
  app.get('/:nodeId/install', specs.install, async (c) => {
    const version = specs.install.query(c).version || undefined
    return jsonText(await install(c.var.actor, c.req.param('nodeId'), version, { count: c.req.method !== 'HEAD' }))
  })

  const versionList = createVersionListLookup(deps)
  app.get('/:nodeId/versions', specs.versions, async (c) => {
    const query = specs.versions.query(c)
    const opts = { statuses: parseStatuses(query.statuses), includeReason: query.include_status_reason ?? false }
    return jsonText(await versionList(c.req.param('nodeId'), opts))
  })

  app.get('/:nodeId/versions/:version', specs.version, async (c) =>
    c.json(await getNodeVersion(deps, c.req.param('nodeId'), c.req.param('version'))),
  )

  app.get('/:nodeId/versions/:version/host-nodes', specs.hostNodes, async (c) =>
    c.json(await getVersionHostNodes(deps, c.req.param('nodeId'), c.req.param('version'))),
  )

  // The upstream's spelling, in the shape its front end reads.
  app.get('/:nodeId/versions/:version/comfy-nodes', specs.comfyNodes, async (c) => {
    const found = await getVersionHostNodes(deps, c.req.param('nodeId'), c.req.param('version'))
    return c.json({ comfy_nodes: found.host_nodes.map((name) => ({ comfy_node_name: name })), totalNumberOfPages: 1 })
  })

  app.post('/:nodeId/reviews', specs.review, async (c) => {
    const { star } = specs.review.query(c)
    return c.json(await addReview(deps, c.var.actor, c.req.param('nodeId'), star))
  })

  return app
}

/** GET /host-nodes/{name}/node (and /comfy-nodes/{name}/node): the node providing a host node class. */
export function hostNodeRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.get('/:name/node', specs.hostNodeOwner, async (c) => c.json(await getHostNodeOwner(deps, c.req.param('name'))))
  return app
}

export function bulkRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.post('/nodes/versions', specs.bulk, async (c) => {
    const body = await specs.bulk.body(c)
    return c.json({ node_versions: await bulkVersions(deps, body.node_versions) })
  })
  return app
}
