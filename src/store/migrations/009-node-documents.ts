/**
 * Schema version 9: each node's rendered JSON kept in its row (what a page of nodes reads in one lookup instead of
 * the node's row, its latest version's and their rendering). Empty at first: a write of the node renders it, and a
 * background fill the nodes written before (readers fall back to rendering the rows).
 */
import type { Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  // The rendering's format; null: none yet. A document of another format is not read, and the fill writes it again.
  await db.schema.alterTable('nodes').addColumn('document_format', 'integer').execute()
  await db.schema.alterTable('nodes').addColumn('document_json', 'text').execute()
  await db.schema.alterTable('nodes').addColumn('document_version_json', 'text').execute()
  await db.schema
    .alterTable('nodes')
    .addColumn('document_download_path', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
}
