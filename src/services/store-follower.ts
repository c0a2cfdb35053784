/**
 * Keeps this process's search index and caches in step with writes that other processes commit to the same store
 * (other instances on one PostgreSQL database, a command beside a running server), by following the store's own
 * change feed from the serial it has applied. It looks every `everyMs`, and at once when PostgreSQL says a change
 * was committed; the feed stays the truth, so a missed wake-up costs at most one interval.
 */
import { feedPosition, listChangesBetween, onCommittedChanges, type FeedSource } from '../store/changes'
import type { ChangeRow } from '../store/schema'
import { listVersionsByIds } from '../store/versions'
import { applyChanges } from './changes'
import type { Deps } from './deps'
import { ownSerials } from './own-serials'
import { unappliedChanges } from './unapplied-changes'
import { inWriteTurn } from './write-turn'

const BATCH = 5000
const FEED_SOURCES: readonly FeedSource[] = ['changes', 'counts']
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

  /** Brings the index and caches up to date with these rows of the feed (none of them this process's). */
  async function apply(rows: readonly ChangeRow[]) {
    const nodes = new Set(rows.filter((r) => r.kind === 'node').map((r) => r.entity_id))
    const versions = rows.filter((r) => r.kind === 'version').map((r) => r.entity_id)
    for (const v of await listVersionsByIds(deps.db, versions)) nodes.add(v.node_id)
    const publishers = rows.filter((r) => r.kind === 'publisher').map((r) => r.entity_id)
    await applyChanges(deps, { nodes: [...nodes], publishers })
  }

  /**
   * Reads the feed up to its last committed serial, skipping this process's own serials (applied when they were
   * written): the stretches between them are read from each of the feed's two sources unmerged, so that another
   * process's edit of a node is seen even when this process counted that node after it. A second's counts of this
   * process (a range of a few thousand serials) are never read back. This process's writes that it could not apply
   * after their commit are applied first (services/unapplied-changes.ts).
   */
  async function catchUp() {
    const unapplied = unappliedChanges.take(deps.db)
    if (unapplied)
      await applyChanges(deps, unapplied).catch((err: unknown) => {
        unappliedChanges.keep(deps.db, unapplied)
        throw err
      })
    // In a write turn: a write of this process that committed has recorded its serials by then.
    const through = await inWriteTurn(deps.db, async () => (await feedPosition(deps.db)).lastSerial)
    for (const [after, upTo] of ownSerials.othersBetween(deps.db, seen, through)) {
      for (const source of FEED_SOURCES) {
        for (let from = after; ;) {
          const rows = await listChangesBetween(deps.db, source, from, upTo, BATCH)
          if (rows.length) await apply(rows)
          if (rows.length < BATCH) break
          from = rows[rows.length - 1]!.serial
        }
      }
      seen = upTo
    }
    seen = Math.max(seen, through)
    ownSerials.forgetThrough(deps.db, seen)
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
