/**
 * Keeps this process's search index and caches in step with writes that other processes commit to the same
 * store (a `sync` or `import` run beside a running server), by following the store's own change feed.
 */
import { feedPosition, listChanges } from '../store/changes'
import { listVersionsByIds } from '../store/versions'
import { applyChanges } from './changes'
import type { Deps } from './deps'

const BATCH = 5000

export interface StoreFollower {
  stop(): void
}

export async function followStore(deps: Pick<Deps, 'db' | 'search' | 'nodeJson' | 'log'>, everyMs: number): Promise<StoreFollower> {
  let seen = (await feedPosition(deps.db)).lastSerial
  let busy = false
  const tick = async () => {
    if (busy) return
    busy = true
    try {
      for (;;) {
        const rows = await listChanges(deps.db, seen, BATCH)
        if (!rows.length) break
        const nodes = new Set(rows.filter((r) => r.kind === 'node').map((r) => r.entity_id))
        const versions = rows.filter((r) => r.kind === 'version').map((r) => r.entity_id)
        for (const v of await listVersionsByIds(deps.db, versions)) nodes.add(v.node_id)
        const publishers = rows.filter((r) => r.kind === 'publisher').map((r) => r.entity_id)
        // Writes of this process come by too; refreshing them again is harmless.
        await applyChanges(deps, { nodes: [...nodes], publishers })
        seen = rows[rows.length - 1]!.serial
      }
    } catch (err) {
      deps.log.warn('store.follow_failed', { error: (err as Error).message })
    } finally {
      busy = false
    }
  }
  const timer = setInterval(() => void tick(), everyMs)
  timer.unref?.()
  return { stop: () => clearInterval(timer) }
}
