/**
 * Schema version 12: a publisher's nodes indexed in id order, with each one's status beside it. A publisher's node
 * list pages by id: through the index of publisher ids alone every page read and sorted all of that publisher's
 * nodes (0.1-0.3 s a page at 20,000 nodes, the event loop held); along this one a page reads its offset and limit
 * of index entries, and the count reads no table row.
 */
import type { Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.dropIndex('nodes_publisher').execute()
  await db.schema.createIndex('nodes_publisher').on('nodes').columns(['publisher_id', 'id', 'status']).execute()
}
