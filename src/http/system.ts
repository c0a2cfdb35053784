/** Liveness, readiness, metrics and the OpenAPI document. */
import { Hono } from 'hono'
import * as v from 'valibot'
import type { Deps } from '../services/deps'
import { readiness } from '../services/readiness'
import type { Env } from './identity'
import { route } from './route-spec'

const specs = {
  health: route({ summary: 'Liveness', tag: 'operations', auth: 'public', response: v.object({ status: v.literal('ok') }) }),
  ready: route({
    summary: "Readiness: database, storage, search index, and a mirror's freshness (503 when not ready)",
    tag: 'operations',
    auth: 'public',
    response: v.object({
      status: v.picklist(['ready', 'not_ready']),
      database: v.string(),
      storage: v.string(),
      search: v.unknown(),
      backends: v.unknown(),
      mirror: v.optional(
        v.object({
          upstream: v.string(),
          state: v.picklist(['ok', 'stale', 'unreachable']),
          last_success_at: v.nullable(v.string()),
          last_attempt_at: v.nullable(v.string()),
          last_error: v.string(),
        }),
      ),
    }),
  }),
  metrics: route({
    summary: 'Metrics in the Prometheus text format (see the README for the list)',
    tag: 'operations',
    auth: 'public',
    description: 'Counts and gauges only: no ids, paths or anything a client sent. Off with --metrics=false.',
    response: { mediaType: 'text/plain' },
  }),
  openapi: route({ summary: 'This document', tag: 'operations', auth: 'public', response: v.record(v.string(), v.unknown()) }),
}

/** `document` is built once the whole app exists (it lists the app's routes). */
export function systemRoutes(deps: Deps, document: () => object) {
  const app = new Hono<Env>()
  app.get('/health', specs.health, (c) => c.json({ status: 'ok' }))
  app.get('/ready', specs.ready, async (c) => {
    const { ready, body } = await readiness(deps)
    return c.json(body, ready ? 200 : 503)
  })
  if (deps.settings.metrics) {
    const { registry } = deps.metrics
    app.get('/metrics', specs.metrics, async (c) => c.body(await registry.metrics(), 200, { 'content-type': registry.contentType }))
  }
  app.get('/openapi', specs.openapi, (c) => c.json(document()))
  return app
}
