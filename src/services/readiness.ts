/**
 * Whether this instance can serve: the store answers, the blob store takes writes, the search index holds every
 * node. A mirror also says how fresh it is; an unreachable upstream does not make it unready (it serves offline).
 */
import { sql } from 'kysely'
import { countIndexableNodes } from '../store/search-docs'
import type { Deps } from './deps'

export type Check = 'ok' | 'failing'

export async function readiness(deps: Pick<Deps, 'db' | 'blobs' | 'search' | 'mirror'>) {
  const database: Check = await sql`select 1`.execute(deps.db).then(
    () => 'ok',
    () => 'failing',
  )
  const storage: Check = (await deps.blobs.check()) ? 'ok' : 'failing'
  const stored = database === 'ok' ? await countIndexableNodes(deps.db) : undefined
  const index = deps.search.status()
  // While the index warms, the store answers searches: still ready. A warm index must hold every node.
  const consistent = !index.ready || index.indexed === stored
  const search = { ...index, stored, state: index.ready ? (consistent ? 'ready' : 'drifted') : 'warming' }
  const ready = database === 'ok' && storage === 'ok' && consistent
  const fresh = deps.mirror?.freshness()
  const mirror = fresh && {
    upstream: fresh.upstream,
    state: fresh.state,
    last_success_at: fresh.lastSuccessAt,
    last_attempt_at: fresh.lastAttemptAt,
    last_error: fresh.lastError,
  }
  return { ready, body: { status: ready ? 'ready' : 'not_ready', database, storage, search, ...(mirror && { mirror }) } }
}
