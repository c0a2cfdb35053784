/**
 * One write at a time per SQLite store in this process, whichever connection runs it: the store's own, or the
 * download writer's in its thread (store/download-writer.ts). SQLite takes one writer at a time anyway, and a write
 * that meets another connection's lock waits for it on a timer (store/sqlite-adapter.ts); taking turns here, this
 * process's writes wait for each other on a promise instead, in order, and what a write does after its commit (its
 * feed serials recorded as this process's own, services/own-serials.ts) is done before the next write or the
 * follower's read of the feed begins. PostgreSQL runs writes side by side, each in its own transaction: there the
 * work just runs.
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
