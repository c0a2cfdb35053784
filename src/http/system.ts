/** Liveness, readiness and the OpenAPI document. */
import { Hono } from 'hono'
import { sql } from 'kysely'
import type { Deps } from '../services/deps'
import { countIndexableNodes } from '../store/search-docs'
import type { Env } from './context'
import { openApiDocument } from './openapi'

export function systemRoutes(deps: Deps) {
  const app = new Hono<Env>()
  const document = openApiDocument(deps.settings.publicUrl)

  app.get('/health', (c) => c.json({ status: 'ok' }))

  app.get('/ready', async (c) => {
    const database = await sql`select 1`.execute(deps.db).then(
      () => 'ok',
      () => 'failing',
    )
    const storage = (await deps.blobs.check()) ? 'ok' : 'failing'
    const stored = database === 'ok' ? await countIndexableNodes(deps.db) : undefined
    const index = deps.search.status()
    // While the index warms, the store answers searches: still ready. A warm index must hold every node.
    const consistent = !index.ready || index.indexed === stored
    const search = { ...index, stored, state: index.ready ? (consistent ? 'ready' : 'drifted') : 'warming' }
    const ready = database === 'ok' && storage === 'ok' && consistent
    return c.json({ status: ready ? 'ready' : 'not_ready', database, storage, search }, ready ? 200 : 503)
  })

  app.get('/openapi', (c) => c.json(document))
  return app
}
