/** The current user and the publishers they belong to. */
import { Hono } from 'hono'
import { requireUser } from '../services/access'
import type { Deps } from '../services/deps'
import { userJson } from '../services/identity'
import { listMyPublishers } from '../services/publishers'
import type { Env } from './context'

export function userRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.get('/', (c) => c.json(userJson(requireUser(c.var.actor))))
  app.get('/publishers', async (c) => c.json(await listMyPublishers(deps, c.var.actor)))
  return app
}
