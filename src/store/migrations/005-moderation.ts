/**
 * Schema version 5: what moderation and the publisher lifecycle need: which node bans a publisher ban made,
 * deleted publishers, and the indexes GET /versions needs (versions by status, newest first; the nodes that are not active).
 */
import type { Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  // 1 when the node is banned because its publisher was: unbanning the publisher restores exactly these,
  // and leaves nodes an admin banned on their own banned.
  await db.schema
    .alterTable('nodes')
    .addColumn('banned_with_publisher', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  // A deleted publisher stays as a tombstone (its deleted nodes still point at it, and its id stays taken).
  await db.schema.alterTable('publishers').addColumn('deleted_at', 'text').execute()
  // The review queue (pending or flagged versions, newest first) reads a range of it; counts by status read only it.
  await db.schema.createIndex('node_versions_status_created').on('node_versions').columns(['status', 'created_at desc', 'id']).execute()
  // Few nodes are banned or deleted: lists that leave them out find those through this partial index, which
  // (unlike an index of every status) never tempts the planner away from the indexes of the node lists.
  await db.schema.createIndex('nodes_not_active').on('nodes').column('status').where('status', '!=', 'active').execute()
}
