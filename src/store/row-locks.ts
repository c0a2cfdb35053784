/**
 * Rows held until the transaction ends, on PostgreSQL, where writes run side by side under read committed: a write
 * that reads something and then changes it (a node's review totals, a user's count of publishers, a node's stored
 * document) holds its row first, so that writes of the same thing take turns and each reads what the last one to
 * commit left. SQLite runs one write at a time (services/write-turn.ts): nothing to hold there.
 */
import { dialectOf, type Store } from './db'

/** These nodes' rows, in id order, as every writer takes them (no two writers wait on each other in a cycle). */
export async function lockNodes(db: Store, ids: readonly string[]): Promise<void> {
  if (dialectOf(db) !== 'postgres' || !ids.length) return
  await db.selectFrom('nodes').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute()
}

/** A version's row, taken before its node's (refreshLatest holds the node once the version rows are written). */
export async function lockVersion(db: Store, id: string): Promise<void> {
  if (dialectOf(db) !== 'postgres') return
  await db.selectFrom('node_versions').select('id').where('id', '=', id).forUpdate().execute()
}

/** The user's row, without blocking writes that only reference it (`for no key update`). */
export async function lockUser(db: Store, id: string): Promise<void> {
  if (dialectOf(db) !== 'postgres') return
  await db.selectFrom('users').select('id').where('id', '=', id).forNoKeyUpdate().execute()
}

/**
 * A publisher's row, shared by the writes that put a node into it (a publish, a node's creation, a claim, a
 * transfer), which read the publisher again once they hold it: they go on side by side, while a delete or a ban of
 * the publisher, which holds it first (lockPublisher, or the update of its status), waits for them or they for it.
 */
export async function sharePublisher(db: Store, id: string): Promise<void> {
  if (dialectOf(db) !== 'postgres') return
  await db.selectFrom('publishers').select('id').where('id', '=', id).forShare().execute()
}

/** The publisher's row, against the writes that share it (sharePublisher), before its live nodes are counted. */
export async function lockPublisher(db: Store, id: string): Promise<void> {
  if (dialectOf(db) !== 'postgres') return
  await db.selectFrom('publishers').select('id').where('id', '=', id).forNoKeyUpdate().execute()
}
