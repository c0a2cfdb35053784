/** GET /changes: the change feed that downstream mirrors follow (public entities only). */
import { Hono } from 'hono'
import * as v from 'valibot'
import { FEED_MAX_LIMIT, FeedPageSchema } from '../domain/feed'
import type { Deps } from '../services/deps'
import { readFeed } from '../services/feed'
import type { Env } from './identity'
import { route } from './route-spec'
import { q } from './validate'

const changes = route({
  summary: 'The change feed: publishers, nodes and versions changed after a serial, oldest first',
  tag: 'mirroring',
  auth: 'public',
  description:
    `Each entry is an entity at the serial of its latest change, as a public GET renders it (op upsert, or ban for a banned one), ` +
    `or a tombstone (op delete). Follow it with since=next until next equals head; a new instance id means the registry was ` +
    `reset and a follower starts over. limit is clamped to ${FEED_MAX_LIMIT}.`,
  query: v.object({ since: q.int(0, 0), limit: q.int(1, 100) }),
  response: FeedPageSchema,
})

export function changeRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.get('/', changes, async (c) => {
    const { since, limit } = changes.query(c)
    return c.json(await readFeed(deps, since, Math.min(limit, FEED_MAX_LIMIT)))
  })
  return app
}
