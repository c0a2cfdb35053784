/**
 * Keeps this process's search index and caches in step with writes that other processes commit to the same
 * store (a `sync` or `import` run beside a running server), by following the store's own change feed.
 */
import { feedPosition, listChanges } from '../store/changes'
import { listVersionsByIds } from '../store/versions'
import { applyChanges } from './changes'
import type { Deps } from './deps'
import { ownSerials } from './own-serials'

const BATCH = 5000

export interface StoreFollower {
  stop(): void
  /** Reads the feed now (the timer does this every `everyMs`). */
  tick(): Promise<void>
}

export async function followStore(deps: Pick<Deps, 'db' | 'search' | 'nodeJson' | 'log'>, everyMs: number): Promise<StoreFollower> {
  let seen = (await feedPosition(deps.db)).lastSerial
  let busy = false
  const tick = async () => {
    if (busy) return
    busy = true
    try {
      for (;;) {
        const read = await listChanges(deps.db, seen, BATCH)
        if (!read.length) break
        // This process's own writes were applied when they were made.
        const rows = read.filter((r) => !ownSerials.has(deps.db, r.serial))
        const nodes = new Set(rows.filter((r) => r.kind === 'node').map((r) => r.entity_id))
        const versions = rows.filter((r) => r.kind === 'version').map((r) => r.entity_id)
        for (const v of await listVersionsByIds(deps.db, versions)) nodes.add(v.node_id)
        const publishers = rows.filter((r) => r.kind === 'publisher').map((r) => r.entity_id)
        if (rows.length) await applyChanges(deps, { nodes: [...nodes], publishers })
        seen = read[read.length - 1]!.serial
        ownSerials.forgetThrough(deps.db, seen)
      }
    } catch (err) {
      deps.log.warn('store.follow_failed', { error: (err as Error).message })
    } finally {
      busy = false
    }
  }
  const timer = setInterval(() => void tick(), everyMs)
  timer.unref?.()
  return { stop: () => clearInterval(timer), tick }
}
