/**
 * Copies a whole SQLite store into a new PostgreSQL one at the same schema version, row for row, in one
 * transaction: users and tokens, publishers, nodes, versions, reviews, the change feed (with its serials and
 * the registry's instance id, so followers and mirrors go on), the audit log, mirroring state. Tables are found in
 * the source and copied parents first, so tables added by later migrations come along too.
 */
import { sql } from 'kysely'
import { feedPosition } from './changes'
import { refreshStatistics, type Store } from './db'

/** Rows per INSERT: well under PostgreSQL's 65,535 bound values for the widest table. */
const PAGE = 500
/** Transient state that a new database starts without. */
const LEFT_OUT = new Set(['rate_limits'])

/** The source's tables, each after the tables its foreign keys point to. */
async function tablesInOrder(from: Store): Promise<string[]> {
  const names = (
    await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(
      from,
    )
  ).rows.map((r) => r.name)
  const parents = new Map<string, string[]>()
  for (const name of names) {
    const fks = await sql<{ table: string }>`select "table" from pragma_foreign_key_list(${name})`.execute(from)
    parents.set(
      name,
      fks.rows.map((f) => f.table).filter((t) => t !== name),
    )
  }
  const ordered: string[] = []
  const visit = (name: string, path: string[]) => {
    if (ordered.includes(name) || path.includes(name)) return
    for (const parent of parents.get(name) ?? []) visit(parent, [...path, name])
    ordered.push(name)
  }
  for (const name of names) visit(name, [])
  return ordered.filter((name) => !LEFT_OUT.has(name))
}

export class TargetNotEmptyError extends Error {
  /** `sameRegistry`: the target holds the source's registry at the source's serial (an earlier copy committed). */
  constructor(
    message: string,
    readonly sameRegistry = false,
  ) {
    super(message)
  }
}

export interface CopyOptions {
  /** Rows of `registry_secrets` to write with the copied rows (the URL-signing key kept in a file beside SQLite). */
  secrets?: Record<string, string>
  onTable?: (table: string, rows: number) => void
}

/**
 * Copies every row of `from` (SQLite) into `to` (PostgreSQL, migrated and empty), and `secrets`, in one transaction;
 * returns the rows per table.
 */
export async function copyStore(from: Store, to: Store, opts: CopyOptions = {}): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  const tables = await tablesInOrder(from)
  await to.transaction().execute(async (trx) => {
    const used = await sql<{
      n: number
    }>`select (select count(*) from users) + (select count(*) from publishers) + (select count(*) from changes) as n`.execute(trx)
    if (Number(used.rows[0]!.n) > 0) throw await notEmpty(from, trx)
    // The new database's own row gives way to the source's: its instance id and last serial.
    await trx.deleteFrom('registry_instance').execute()
    for (const table of tables) {
      let copied = 0
      for (let after = -1; ;) {
        const page = (
          await sql<
            Record<string, unknown> & { __rowid: number }
          >`select rowid as __rowid, * from ${sql.table(table)} where rowid > ${after} order by rowid limit ${PAGE}`.execute(from)
        ).rows
        if (!page.length) break
        after = page[page.length - 1]!.__rowid
        const rows = page.map(({ __rowid: _, ...row }) => row)
        await trx
          .insertInto(table as never)
          .values(rows as never)
          .execute()
        copied += rows.length
      }
      counts[table] = copied
      opts.onTable?.(table, copied)
    }
    // With the rows, not after them: a copy killed between the two left a registry whose signed URLs no instance
    // could check, and that a second run refused to touch.
    const now = new Date().toISOString()
    for (const [name, value] of Object.entries(opts.secrets ?? {}))
      await trx
        .insertInto('registry_secrets')
        .values({ name, value, created_at: now })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute()
    // The audit log's ids were copied as they were: its sequence goes on after the last.
    await sql`select setval(pg_get_serial_sequence('audit_log', 'id'), coalesce((select max(id) from audit_log), 0) + 1, false)`.execute(
      trx,
    )
  })
  // Without statistics, at 10,000 nodes a version list took 17-25 ms on an index of every version's status instead of
  // 0.1 ms on its node's.
  await refreshStatistics(to, tables)
  return counts
}

/** Statistics of every table a copy fills: what a copy killed after its commit left undone. */
export async function refreshCopiedStatistics(from: Store, to: Store): Promise<void> {
  await refreshStatistics(to, await tablesInOrder(from))
}

/** The refusal of a target that holds a registry, saying whether it is this one, copied by an earlier run. */
async function notEmpty(from: Store, target: Store): Promise<TargetNotEmptyError> {
  const [source, held] = await Promise.all([feedPosition(from), feedPosition(target).catch(() => undefined)])
  if (held?.instanceId === source.instanceId && held.lastSerial === source.lastSerial)
    return new TargetNotEmptyError(
      `the target database already holds this registry (instance ${source.instanceId} at serial ${source.lastSerial}): ` +
        'an earlier copy-store completed; nothing was copied',
      true,
    )
  return new TargetNotEmptyError('the target database already holds a registry: copy only into a new, empty one')
}
