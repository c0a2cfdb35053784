/**
 * Keeps this process's search index and caches in step with writes that other processes commit to the same store
 * (other instances on one PostgreSQL database, a command beside a running server), by following the store's own
 * change feed from the serial it has applied. It looks every `everyMs`, and at once when PostgreSQL says a change
 * was committed; the feed stays the truth, so a missed wake-up costs at most one interval.
 */
import { feedPosition, listChanges, onCommittedChanges } from '../store/changes'
import { listVersionsByIds } from '../store/versions'
import { applyChanges } from './changes'
import type { Deps } from './deps'
import { ownSerials } from './own-serials'
import { inWriteTurn } from './write-turn'

const BATCH = 5000
/** Listening again after the connection that held LISTEN failed (the database restarted, say). */
const RELISTEN_MS = 5000

export interface StoreFollower {
  /** The last serial whose changes this process's index and caches hold. */
  applied(): number
  /** Looks at the feed now (tests, and the wake-up from LISTEN). */
  poll(): Promise<void>
  stop(): void
}

export async function followStore(deps: Pick<Deps, 'db' | 'search' | 'nodeJson' | 'log'>, everyMs: number): Promise<StoreFollower> {
  let seen = (await feedPosition(deps.db)).lastSerial
  let running: Promise<void> | undefined
  let again = false
  let stopped = false

  async function catchUp() {
    for (;;) {
      // In a write turn: a write of this process that committed has recorded its serials by then.
      const read = await inWriteTurn(deps.db, () => listChanges(deps.db, seen, BATCH))
      if (!read.length) return
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
  }

  /** One catch-up at a time; a wake-up during one runs another right after it. */
  function poll(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        try {
          await catchUp()
        } catch (err) {
          deps.log.warn('store.follow_failed', { error: (err as Error).message })
          return
        }
      } while (again && !stopped)
    })().finally(() => (running = undefined))
    return running
  }

  let unlisten: (() => Promise<void>) | undefined
  let relisten: ReturnType<typeof setTimeout> | undefined
  async function listen() {
    try {
      unlisten = await onCommittedChanges(deps.db, () => void poll())
    } catch (err) {
      deps.log.warn('store.listen_failed', { error: (err as Error).message })
      if (!stopped) relisten = setTimeout(() => void listen(), RELISTEN_MS)
    }
  }
  await listen()

  const timer = setInterval(() => void poll(), everyMs)
  timer.unref?.()
  return {
    applied: () => seen,
    poll,
    stop() {
      stopped = true
      clearInterval(timer)
      clearTimeout(relisten)
      void unlisten?.().catch(() => {})
    },
  }
}
