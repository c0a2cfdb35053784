/**
 * Schema version 10: node documents move out of the node rows into a table of their own. In the rows (version 9)
 * they made every row about 2 KB instead of 640 bytes, and every scan of the nodes table (the warm-up's reads, the
 * store search that answers while it runs) read three times the pages. The documents are not carried over: the
 * fill writes them again (readers fall back to the rows meanwhile).
 */
import type { Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  for (const column of ['document_format', 'document_json', 'document_version_json', 'document_download_path']) {
    await db.schema.alterTable('nodes').dropColumn(column).execute()
  }
  await db.schema
    .createTable('node_documents')
    .addColumn('node_id', 'text', (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
    // The rendering's format: a document of another format is not read, and the fill writes it again.
    .addColumn('format', 'integer', (c) => c.notNull())
    // Which publisher and latest version it was rendered with (what is put in when it is served depends on them).
    .addColumn('publisher_id', 'text', (c) => c.notNull())
    .addColumn('latest_version_id', 'text')
    .addColumn('node_json', 'text', (c) => c.notNull())
    .addColumn('version_json', 'text')
    .addColumn('download_path', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
}
