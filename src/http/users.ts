/** The current user and the publishers they belong to. */
import { Hono } from 'hono'
import * as v from 'valibot'
import { PublisherSchema, UserSchema } from '../domain/wire'
import { requireUser } from '../services/access'
import type { Deps } from '../services/deps'
import { userJson } from '../services/identity'
import { listMyPublishers } from '../services/publishers'
import type { Env } from './identity'
import { route } from './route-spec'

const me = route({ summary: 'The current user', tag: 'users', auth: 'bearer', response: UserSchema })
const myPublishers = route({ summary: "The current user's publishers", tag: 'users', auth: 'bearer', response: v.array(PublisherSchema) })

export function userRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.get('/', me, (c) => c.json(userJson(requireUser(c.var.actor))))
  app.get('/publishers', myPublishers, async (c) => c.json(await listMyPublishers(deps, c.var.actor)))
  return app
}
