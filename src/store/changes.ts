/** The change feed and the audit log: rows appended inside the transaction of the write they record. */
import { sql } from 'kysely'
import { insertRows } from './bulk'
import { dialectOf, postgresClient, type Store } from './db'
import type { AuditLogTable, ChangeKind, ChangeRow } from './schema'
import type { Insertable } from 'kysely'

/**
 * Takes `n` serials (a contiguous range, the last of which it returns) for this transaction's entries. Updating the
 * one counter row locks it until commit, so serials follow commit order on every dialect.
 */
export async function reserveSerials(db: Store, n: number): Promise<{ first: number; last: number }> {
  const { last_serial } = await db
    .updateTable('registry_instance')
    .set((eb) => ({ last_serial: eb('last_serial', '+', n) }))
    .where('id', '=', 1)
    .returning('last_serial')
    .executeTakeFirstOrThrow()
  // Other instances on PostgreSQL hear of it at commit (not before: NOTIFY waits for the transaction) and look sooner.
  if (dialectOf(db) === 'postgres') await sql`select pg_notify(${CHANNEL}, current_schema())`.execute(db)
  return { first: Number(last_serial) - n + 1, last: Number(last_serial) }
}

/** Gives each entity the next serial; an entity already in the feed moves to its new serial (one row per entity). */
/** Appends the entities; returns the serials they were given (a contiguous range), none when there were none. */
export async function appendChanges(
  db: Store,
  entities: readonly { kind: ChangeKind; id: string }[],
  now: string,
): Promise<{ first: number; last: number } | undefined> {
  if (!entities.length) return undefined
  const serials = await reserveSerials(db, entities.length)
  const rows = entities.map((e, i) => ({ serial: serials.first + i, kind: e.kind, entity_id: e.id, changed_at: now }))
  // Without a query tree per row: a sync's batch appends thousands.
  await insertRows(
    db,
    'changes',
    rows,
    'on conflict (kind, entity_id) do update set serial = excluded.serial, changed_at = excluded.changed_at',
  )
  return serials
}

/**
 * Entities changed after `since`, oldest change first. A node's download counts are fed from its narrow row (schema
 * 17: node_downloads.serial, the serial of its last count), its other changes from `changes`; a node is listed once,
 * at the newer of the two, as when every change of it moved its one row in `changes`. Each side stops at `limit`.
 */
export async function listChanges(db: Store, since: number, limit: number): Promise<ChangeRow[]> {
  const [changes, counts] = [sql.table('changes'), sql.table('node_downloads')]
  const { rows } = await sql<ChangeRow>`
    select * from (
      select c.serial, c.kind, c.entity_id, c.changed_at from ${changes} c
      where c.serial > ${since} and not (c.kind = 'node' and exists (
        select 1 from ${counts} d where d.node_id = c.entity_id and d.serial > c.serial))
      order by c.serial limit ${limit}) as changed
    union all
    select * from (
      select d.serial, 'node' as kind, d.node_id as entity_id, d.changed_at from ${counts} d
      where d.serial > ${since} and not exists (
        select 1 from ${changes} c where c.kind = 'node' and c.entity_id = d.node_id and c.serial > d.serial)
      order by d.serial limit ${limit}) as counted
    order by serial limit ${limit}`.execute(db)
  return rows.map((r) => ({ ...r, serial: Number(r.serial) }))
}

/** Where the feed's rows are kept: `changes` (every kind), or the nodes' narrow rows (the serials of their counts). */
export type FeedSource = 'changes' | 'counts'

/**
 * One source's rows with `after < serial <= through`, oldest first, up to `limit`; not merged as listChanges merges
 * them (a node once, at the newer of its two serials, which hides another process's edit behind a later count of this
 * one): for a process following its own store, which skips the serials it wrote itself.
 */
export async function listChangesBetween(
  db: Store,
  source: FeedSource,
  after: number,
  through: number,
  limit: number,
): Promise<ChangeRow[]> {
  const rows =
    source === 'changes'
      ? await db
          .selectFrom('changes')
          .select(['serial', 'kind', 'entity_id', 'changed_at'])
          .where('serial', '>', after)
          .where('serial', '<=', through)
          .orderBy('serial')
          .limit(limit)
          .execute()
      : await db
          .selectFrom('node_downloads')
          .select(['serial', sql<'node'>`'node'`.as('kind'), 'node_id as entity_id', 'changed_at'])
          .where('serial', '>', after)
          .where('serial', '<=', through)
          .orderBy('serial')
          .limit(limit)
          .execute()
  return rows.map((r) => ({ ...r, serial: Number(r.serial), changed_at: r.changed_at ?? '' }))
}

export async function feedPosition(db: Store): Promise<{ instanceId: string; lastSerial: number }> {
  const row = await db.selectFrom('registry_instance').select(['instance_id', 'last_serial']).executeTakeFirstOrThrow()
  return { instanceId: row.instance_id, lastSerial: Number(row.last_serial) }
}

export async function insertAudit(db: Store, rows: readonly Insertable<AuditLogTable>[]): Promise<void> {
  if (rows.length)
    await db
      .insertInto('audit_log')
      .values([...rows])
      .execute()
}

/** Audit entries newest first: at or after `since`, older than the entry `before` (the cursor of the previous page). */
export function listAudit(db: Store, q: { since?: string; before?: number; limit: number }) {
  let query = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(q.limit)
  if (q.since !== undefined) query = query.where('at', '>=', q.since)
  if (q.before !== undefined) query = query.where('id', '<', q.before)
  return query.execute()
}

/** The channel instances on one PostgreSQL database wake each other on; the payload names the schema written to. */
const CHANNEL = 'registry_mirror_changes'

/**
 * Calls `wake` soon after another process commits a change to this store (PostgreSQL LISTEN); a hint only, the
 * feed stays the truth. Resolves to a function that stops listening; on SQLite there is nothing to listen to.
 */
export async function onCommittedChanges(db: Store, wake: () => void): Promise<() => Promise<void>> {
  const client = postgresClient(db)
  if (!client) return async () => {}
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s
  const subscription = await client.listen(CHANNEL, (payload: string) => {
    if (payload === schema) wake()
  })
  return () => subscription.unlisten()
}
