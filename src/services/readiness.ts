/**
 * Whether this instance can serve: the store answers at this executable's schema version, the blob store takes
 * writes, the search index holds every node and has applied the change feed (its lag in serials: writes of other
 * instances it has yet to show). A mirror also says how fresh it is; an unreachable upstream does not make it
 * unready (it serves offline).
 */
import { sql } from 'kysely'
import { withoutUrlSecrets } from '../domain/urls'
import { dialectOf, isDatabaseUnavailable } from '../store/db'
import { feedPosition } from '../store/changes'
import { LATEST_SCHEMA_VERSION } from '../store/migrations'
import { schemaVersion } from '../store/migrate'
import { countIndexableNodes } from '../store/search-docs'
import type { Deps } from './deps'

export type Check = 'ok' | 'failing'

/** An index this far behind the feed is not ready (a follower that stopped); a few serials are writes in flight. */
const LAG_LIMIT = 1000

async function databaseState(deps: Pick<Deps, 'db'>): Promise<Check | 'not_migrated'> {
  try {
    await sql`select 1`.execute(deps.db)
    return (await schemaVersion(deps.db, dialectOf(deps.db))) === LATEST_SCHEMA_VERSION ? 'ok' : 'not_migrated'
  } catch {
    return 'failing'
  }
}

/**
 * The store's count of nodes and the feed's head, or undefined when the database went away after the first look:
 * then as failing as if it had gone before (a 503 with this body, not the error body of a request that failed).
 */
async function storeState(deps: Pick<Deps, 'db' | 'search'>): Promise<{ stored: number; head: number } | undefined> {
  try {
    let stored = await countIndexableNodes(deps.db)
    const head = (await feedPosition(deps.db)).lastSerial
    const index = deps.search.status()
    // Another instance's write between the count and the index's size is no drift: look once more before saying so.
    if (index.ready && index.indexed !== stored) stored = await countIndexableNodes(deps.db)
    return { stored, head }
  } catch (err) {
    if (isDatabaseUnavailable(err)) return undefined
    throw err
  }
}

export async function readiness(deps: Pick<Deps, 'db' | 'blobs' | 'search' | 'feed' | 'mirror'>) {
  const first = await databaseState(deps)
  const storage: Check = (await deps.blobs.check()) ? 'ok' : 'failing'
  const counted = first === 'ok' ? await storeState(deps) : undefined
  const database = first === 'ok' && !counted ? 'failing' : first
  const up = database === 'ok'
  const stored = counted?.stored
  const head = counted?.head
  const applied = deps.feed?.applied()
  const lag = head !== undefined && applied !== undefined ? Math.max(0, head - applied) : undefined
  const index = deps.search.status()
  // While the index warms, the store answers searches: still ready. A warm index must hold every node, unless
  // changes it has yet to apply explain the difference; with the database away there is nothing to compare with.
  const consistent = !index.ready || stored === undefined || index.indexed === stored || (lag ?? 0) > 0
  const search = { ...index, stored, lag, state: index.ready ? (consistent ? 'ready' : 'drifted') : 'warming' }
  const ready = up && storage === 'ok' && consistent && (lag ?? 0) < LAG_LIMIT
  const fresh = deps.mirror?.freshness()
  // A public answer: an address in these (an upstream's, an archive's in the error) without its secrets.
  const mirror = fresh && {
    upstream: withoutUrlSecrets(fresh.upstream),
    state: fresh.state,
    last_success_at: fresh.lastSuccessAt,
    last_attempt_at: fresh.lastAttemptAt,
    last_error: withoutUrlSecrets(fresh.lastError),
  }
  return {
    ready,
    body: {
      status: ready ? 'ready' : 'not_ready',
      database,
      storage,
      search,
      backends: {
        database: dialectOf(deps.db),
        storage: deps.blobs.presign ? 's3' : 'disk',
        feed_serial: head,
        schema_version: LATEST_SCHEMA_VERSION,
      },
      ...(mirror && { mirror }),
    },
  }
}
