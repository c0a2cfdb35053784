/**
 * One write at a time per SQLite store in this process, whichever connection runs it: the store's own, or the
 * download writer's in its thread (store/download-writer.ts). SQLite takes one writer at a time anyway, but a
 * transaction that has read before it writes fails at once, without waiting, when another connection committed in
 * between; and a write that waited for the lock would wait with the event loop held. Taking turns here, the waiting
 * is on a promise. PostgreSQL runs writes side by side, each in its own transaction: there the work just runs.
 */
import { dialectOf, type Store } from '../store/db'

const lastTurn = new WeakMap<Store, Promise<unknown>>()

/** Runs `work` once the store's writes taken before it have ended (failed or not). Never nest: it would wait on itself. */
export function inWriteTurn<T>(db: Store, work: () => Promise<T>): Promise<T> {
  if (dialectOf(db) === 'postgres') return work()
  const before = lastTurn.get(db) ?? Promise.resolve()
  const turn = before.then(work)
  lastTurn.set(
    db,
    turn.catch(() => {}),
  )
  return turn
}
