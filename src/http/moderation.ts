/** Admin routes: bans and unbans of nodes and publishers, any version's status, and the audit log. */
import { type Context, Hono } from 'hono'
import * as v from 'valibot'
import { VersionSchema } from '../domain/wire'
import { requireAdmin } from '../services/access'
import { AuditPageSchema, readAudit } from '../services/audit'
import type { Deps } from '../services/deps'
import { moderateNode, moderatePublisher, setVersionStatus, type Moderation } from '../services/moderation'
import { str } from './fields'
import type { Env } from './identity'
import { route } from './route-spec'
import { VersionStatusField } from './status-names'
import { q } from './validate'

const ReasonBody = v.object({ reason: str(1000) })

const moderation = (summary: string) =>
  route({
    summary,
    tag: 'moderation',
    auth: 'admin',
    body: ReasonBody,
    status: 204,
    description: 'An optional reason goes to the audit log.',
  })

const specs = {
  banNode: moderation('Ban a node: refused on publish, reads and install; hidden from search unless include_banned'),
  unbanNode: moderation('Unban a node'),
  banPublisher: moderation('Ban a publisher and its active nodes'),
  unbanPublisher: moderation('Unban a publisher and restore exactly the nodes its ban banned'),
  versionStatus: route({
    summary: "Set any version's status, with a reason (e.g. approve a pending upload)",
    tag: 'moderation',
    auth: 'admin',
    body: v.object({ status: VersionStatusField, status_reason: str(2000) }),
    response: VersionSchema,
  }),
  audit: route({
    summary: 'The audit log, newest first: who did what, when, from where',
    tag: 'moderation',
    auth: 'admin',
    query: v.object({
      since: q.time,
      limit: q.int(1, 50),
      before: q.int(1, undefined),
    }),
    response: AuditPageSchema,
  }),
}

/** Mounted under /publishers. */
export function publisherModerationRoutes(deps: Deps) {
  const app = new Hono<Env>()
  const nodeAction = (action: Moderation) => async (c: Context<Env>) => {
    const { reason } = await specs.banNode.body(c)
    const path = { publisherId: c.req.param('publisherId')!, nodeId: c.req.param('nodeId')! }
    await moderateNode(deps, c.var.actor, path, action, reason ?? undefined)
    return c.body(null, 204)
  }
  app.post('/:publisherId/nodes/:nodeId/ban', specs.banNode, nodeAction('ban'))
  app.post('/:publisherId/nodes/:nodeId/unban', specs.unbanNode, nodeAction('unban'))
  const publisherAction = (action: Moderation) => async (c: Context<Env>) => {
    const { reason } = await specs.banPublisher.body(c)
    await moderatePublisher(deps, c.var.actor, c.req.param('publisherId')!, action, reason ?? undefined)
    return c.body(null, 204)
  }
  app.post('/:publisherId/ban', specs.banPublisher, publisherAction('ban'))
  app.post('/:publisherId/unban', specs.unbanPublisher, publisherAction('unban'))
  return app
}

/** Mounted under /admin. */
export function adminRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.put('/nodes/:nodeId/versions/:version', specs.versionStatus, async (c) => {
    const body = await specs.versionStatus.body(c)
    const change = { status: body.status, reason: body.status_reason ?? undefined }
    return c.json(await setVersionStatus(deps, c.var.actor, c.req.param(), change))
  })
  app.get('/audit', specs.audit, async (c) => {
    requireAdmin(c.var.actor)
    const query = specs.audit.query(c)
    return c.json(await readAudit(deps.db, query))
  })
  return app
}
