/** Node routes: search and list, one node, its versions, install, reviews, and the bulk version lookup. */
import { Hono } from 'hono'
import * as v from 'valibot'
import { badRequest } from '../errors'
import type { Deps } from '../services/deps'
import { nodePageJson } from '../services/node-lists'
import {
  bulkVersions,
  getHostNodeOwner,
  getNode,
  getNodeVersion,
  getVersionHostNodes,
  installNode,
  listNodeVersions,
} from '../services/nodes'
import { addReview } from '../services/reviews'
import type { VersionStatus } from '../store/schema'
import { VERSION_STATUS } from '../domain/wire'
import type { Env } from './context'
import { listResponseCache } from './response-cache'
import { jsonBody, q, queryParams } from './validate'

const ListQuery = v.object({
  page: q.int(1, 1),
  limit: q.int(1, 10),
  search: q.text,
  repository_url_search: q.text,
  host_node_search: q.text,
  comfy_node_search: q.text,
  supported_os: q.text,
  supported_accelerator: q.text,
  include_banned: q.bool,
  node_id: q.many,
  timestamp: v.optional(
    v.pipe(
      v.string('must be given once'),
      v.check((s) => !Number.isNaN(Date.parse(s)), 'must be an RFC 3339 date-time'),
      v.transform((s) => new Date(s).toISOString()),
    ),
  ),
})

const STATUS_BY_NAME = new Map(Object.entries(VERSION_STATUS).map(([k, name]) => [name.toLowerCase(), k as VersionStatus]))

const VersionsQuery = v.object({ statuses: q.many, include_status_reason: q.bool })

const BulkBody = v.object({
  node_versions: v.pipe(
    v.array(
      v.object({ node_id: v.pipe(v.string(), v.maxLength(100)), version: v.pipe(v.string(), v.maxLength(100)) }),
      'must be a list of {node_id, version}',
    ),
    v.maxLength(500, 'must have at most 500 items'),
  ),
})

const ReviewQuery = v.object({
  star: v.pipe(v.string('is required once (1 to 5)'), v.regex(/^[1-5]$/, 'must be an integer from 1 to 5'), v.transform(Number)),
})

function listParams(query: v.InferOutput<typeof ListQuery>, nodeIds: boolean) {
  return {
    page: query.page,
    limit: query.limit,
    search: query.search || undefined,
    repositoryUrl: query.repository_url_search || undefined,
    hostNode: query.host_node_search || query.comfy_node_search || undefined,
    os: query.supported_os || undefined,
    accelerator: query.supported_accelerator || undefined,
    includeBanned: query.include_banned ?? false,
    nodeIds: nodeIds ? query.node_id : undefined,
    changedSince: nodeIds ? query.timestamp : undefined,
  }
}

function parseStatuses(names: string[] | undefined): VersionStatus[] | undefined {
  return names?.map((name) => {
    const status = STATUS_BY_NAME.get(name.toLowerCase()) ?? STATUS_BY_NAME.get(`nodeversionstatus${name.toLowerCase()}`)
    if (!status) throw badRequest(`statuses: "${name}" is not a NodeVersionStatus`)
    return status
  })
}

export function nodeRoutes(deps: Deps, opts: { gzip?: boolean } = {}) {
  const app = new Hono<Env>()

  const page = (json: string) => new Response(json, { headers: { 'content-type': 'application/json' } })
  const cached = listResponseCache({
    generation: () => deps.nodeJson.generation,
    enabled: () => deps.search.status().ready,
    gzip: opts.gzip ?? false,
  })
  app.get('/', cached, async (c) => page(await nodePageJson(deps, listParams(queryParams(c, ListQuery), true))))
  app.get('/search', cached, async (c) => page(await nodePageJson(deps, listParams(queryParams(c, ListQuery), false))))

  app.get('/:nodeId', async (c) => c.json(await getNode(deps, c.req.param('nodeId'))))

  app.get('/:nodeId/install', async (c) => c.json(await installNode(deps, c.req.param('nodeId'), c.req.query('version') || undefined)))

  app.get('/:nodeId/versions', async (c) => {
    const query = queryParams(c, VersionsQuery)
    const opts = { statuses: parseStatuses(query.statuses), includeReason: query.include_status_reason ?? false }
    return c.json(await listNodeVersions(deps, c.req.param('nodeId'), opts))
  })

  app.get('/:nodeId/versions/:version', async (c) => c.json(await getNodeVersion(deps, c.req.param('nodeId'), c.req.param('version'))))

  app.get('/:nodeId/versions/:version/host-nodes', async (c) =>
    c.json(await getVersionHostNodes(deps, c.req.param('nodeId'), c.req.param('version'))),
  )

  // The upstream's spelling, in the shape its front end reads.
  app.get('/:nodeId/versions/:version/comfy-nodes', async (c) => {
    const found = await getVersionHostNodes(deps, c.req.param('nodeId'), c.req.param('version'))
    return c.json({ comfy_nodes: found.host_nodes.map((name) => ({ comfy_node_name: name })), totalNumberOfPages: 1 })
  })

  app.post('/:nodeId/reviews', async (c) => {
    const { star } = queryParams(c, ReviewQuery)
    return c.json(await addReview(deps, c.var.actor, c.req.param('nodeId'), star))
  })

  return app
}

/** GET /host-nodes/{name}/node (and /comfy-nodes/{name}/node): the node providing a host node class. */
export function hostNodeRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.get('/:name/node', async (c) => c.json(await getHostNodeOwner(deps, c.req.param('name'))))
  return app
}

export function bulkRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.post('/nodes/versions', async (c) => {
    const body = await jsonBody(c, BulkBody)
    return c.json({ node_versions: await bulkVersions(deps, body.node_versions) })
  })
  return app
}
