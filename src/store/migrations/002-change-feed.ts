/** Schema version 2: the change feed (serial-numbered, one row per entity at its latest change), the audit log, single-use upload claims. */
import { sql, type Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, ctx: MigrationContext): Promise<void> {
  // One row: this registry's id (a reset upstream gets a new one) and the last serial handed out.
  // Writers take serials by updating this row, so serials follow commit order on every dialect.
  await db.schema
    .createTable('registry_instance')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('last_serial', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('changes')
    .addColumn('serial', 'integer', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('publisher', 'node', 'version')`))
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('changed_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('changes_entity', ['kind', 'entity_id'])
    .execute()

  // Every entity that exists gets its first change, so a follower starting at 0 sees everything.
  await sql`insert into changes (serial, kind, entity_id, changed_at)
    select row_number() over (order by k, id), kind, id, ${ctx.now} from (
      select 0 as k, 'publisher' as kind, id from publishers
      union all select 1, 'node', id from nodes
      union all select 2, 'version', id from node_versions
    ) as existing`.execute(db)
  const count = await sql<{ n: number }>`select count(*) as n from changes`.execute(db)
  await db
    .insertInto('registry_instance')
    .values({ id: 1, instance_id: crypto.randomUUID(), last_serial: Number(count.rows[0]!.n), created_at: ctx.now })
    .execute()

  const autoId = ctx.dialect === 'postgres' ? 'serial' : 'integer'
  await db.schema
    .createTable('audit_log')
    .addColumn('id', autoId, (c) => (ctx.dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_address', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_kind', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('before_json', 'text')
    .addColumn('after_json', 'text')
    .execute()
  await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute()

  // A signed upload is single-use from its first byte: the first PUT claims the version, in the database.
  await db.schema
    .createTable('upload_claims')
    .addColumn('version_id', 'text', (c) => c.primaryKey().references('node_versions.id').onDelete('cascade'))
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .execute()
}
