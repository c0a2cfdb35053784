/** What SQLite plans for the statements a store read sends: for tests that a read walks the index meant for it. */
import { CompiledQuery } from 'kysely'
import type { Store } from '../../src/store/db'
import { watchQueries } from './watch-queries'

/** Each statement `read` sends through a watched handle on `db`, and its query plan (the details joined by ' | '). */
export async function plansOf(db: Store, read: (db: Store) => Promise<unknown>): Promise<{ sql: string; plan: string }[]> {
  const compiled: CompiledQuery[] = []
  const watching = watchQueries(db, (query, queryId) => compiled.push(db.getExecutor().compileQuery(query, queryId)))
  await read(watching)
  const plans = []
  for (const q of compiled) {
    const rows = (await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]))).rows
    plans.push({ sql: q.sql, plan: rows.map((r) => r.detail).join(' | ') })
  }
  return plans
}
