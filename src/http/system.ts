/** Liveness, readiness and the OpenAPI document. */
import { Hono } from 'hono'
import { sql } from 'kysely'
import type { Deps } from '../services/deps'
import type { Env } from './context'
import { openApiDocument } from './openapi'

export function systemRoutes(deps: Deps) {
  const app = new Hono<Env>()
  const document = openApiDocument(deps.settings.publicUrl)

  app.get('/health', (c) => c.json({ status: 'ok' }))

  app.get('/ready', async (c) => {
    const database = await sql`select 1`.execute(deps.db).then(() => 'ok', () => 'failing')
    const storage = (await deps.blobs.check()) ? 'ok' : 'failing'
    const search = deps.search.status()
    const ready = database === 'ok' && storage === 'ok'
    return c.json({ status: ready ? 'ready' : 'not_ready', database, storage, search }, ready ? 200 : 503)
  })

  app.get('/openapi', (c) => c.json(document))
  return app
}
