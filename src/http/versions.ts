/** GET /versions: versions across nodes, paged, newest first. */
import { Hono } from 'hono'
import * as v from 'valibot'
import { VersionSchema } from '../domain/wire'
import type { Deps } from '../services/deps'
import { listVersionsPage } from '../services/version-lists'
import type { Env } from './identity'
import { route } from './route-spec'
import { parseStatuses } from './status-names'
import { q } from './validate'

const list = route({
  summary: 'Versions across nodes (or of one node), newest first, paged; versions of banned nodes to admins only',
  tag: 'nodes',
  auth: 'optional',
  query: v.object({ nodeId: q.text, statuses: q.many, include_status_reason: q.bool, page: q.int(1, 1), pageSize: q.int(1, 10) }),
  response: v.object({
    versions: v.array(VersionSchema),
    total: v.number(),
    page: v.number(),
    pageSize: v.number(),
    totalPages: v.number(),
  }),
})

export function versionRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.get('/', list, async (c) => {
    const query = list.query(c)
    const opts = {
      nodeId: query.nodeId || undefined,
      statuses: parseStatuses(query.statuses),
      includeReason: query.include_status_reason ?? false,
      page: query.page,
      pageSize: query.pageSize,
    }
    return c.json(await listVersionsPage(deps, c.var.actor, opts))
  })
  return app
}
