/**
 * Schema version 17: download counts in a narrow table of their own. A second's flush counted some 2,850 nodes at
 * 100,000, each a rewrite of the node's wide row, of its entry in the list order's index and of its feed entry (a
 * delete and an insert in the change feed's two trees of a million rows): 140 µs of the writer's thread a node in a
 * loop. Here a count rewrites one narrow row and its two index entries. The row carries the node's search_ranking
 * (a copy, written wherever the node's is) so that the list order stays an index the SQL search stops early in, and
 * the serial of the node's last count: counts are fed from here (store/changes.ts lists both), not from `changes`.
 * Every node gets its row, with its count; `nodes.downloads` and its index go. The counts stored so far were fed as
 * node changes already, so their serial starts empty.
 */
import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('node_downloads')
    .addColumn('node_id', 'text', (c) => c.primaryKey().references('nodes.id').onDelete('cascade').onUpdate('cascade'))
    .addColumn('search_ranking', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('downloads', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('serial', 'integer')
    .addColumn('changed_at', 'text')
    .execute()
  await sql`insert into node_downloads (node_id, search_ranking, downloads) select id, search_ranking, downloads from nodes`.execute(db)
  await db.schema.dropIndex('nodes_order').execute()
  await db.schema.alterTable('nodes').dropColumn('downloads').execute()
  await db.schema
    .createIndex('node_downloads_order')
    .on('node_downloads')
    .columns(['search_ranking desc', 'downloads desc', 'node_id'])
    .execute()
  await db.schema.createIndex('node_downloads_serial').on('node_downloads').column('serial').where('serial', 'is not', null).execute()
}
