/**
 * Schema version 8: where a mirrored publisher, node or version came from moves onto its own row. A separate
 * origin row per entity (with its key and source index) was a quarter of a first sync's writes; as columns
 * it is written with the entity, in the same row. Local entities have no source (null).
 */
import { sql, type Kysely } from 'kysely'
import type { MigrationContext } from './migration'

const TABLES = [
  { table: 'publishers', kind: 'publisher', owner: false, hostNodes: false },
  { table: 'nodes', kind: 'node', owner: true, hostNodes: false },
  { table: 'node_versions', kind: 'version', owner: false, hostNodes: true },
] as const

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  for (const t of TABLES) {
    // The upstream it is mirrored from; null for a local entity.
    await db.schema
      .alterTable(t.table)
      .addColumn('mirror_source_id', 'text', (c) => c.references('mirror_sources.id'))
      .execute()
    // What the upstream said last: a row that differs was changed here (moderation, a claim) and keeps it.
    await db.schema
      .alterTable(t.table)
      .addColumn('mirror_status', 'text', (c) => c.notNull().defaultTo(''))
      .execute()
    if (t.owner)
      await db.schema
        .alterTable(t.table)
        .addColumn('mirror_owner', 'text', (c) => c.notNull().defaultTo(''))
        .execute()
    // The mark of the last full pass that saw it (what a completed full pass did not see is gone upstream),
    // or when a sync last wrote it.
    await db.schema
      .alterTable(t.table)
      .addColumn('mirror_checked_at', 'text', (c) => c.notNull().defaultTo(''))
      .execute()
    // Versions: when their host node names were asked for (the public registry serves them separately).
    if (t.hostNodes) await db.schema.alterTable(t.table).addColumn('mirror_host_nodes_at', 'text').execute()

    // The origins recorded so far move onto their rows (origins of rows that no longer exist are dropped).
    const origin = (column: string) =>
      sql`(select o.${sql.ref(column)} from mirror_origins o where o.kind = ${t.kind} and o.entity_id = ${sql.table(t.table)}.id)`
    await db
      .updateTable(t.table)
      .set({
        mirror_source_id: origin('source_id'),
        mirror_status: origin('applied_status'),
        mirror_checked_at: origin('checked_at'),
        ...(t.owner && { mirror_owner: origin('applied_owner') }),
        ...(t.hostNodes && { mirror_host_nodes_at: origin('host_nodes_at') }),
      })
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('mirror_origins as o').select('o.kind').where('o.kind', '=', t.kind).whereRef('o.entity_id', '=', `${t.table}.id`),
        ),
      )
      .execute()
  }
  await db.schema.dropIndex('mirror_origins_source').execute()
  await db.schema.dropTable('mirror_origins').execute()
}
