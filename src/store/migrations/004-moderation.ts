/** Schema version 4: what moderation and the publisher lifecycle need: which node bans a publisher ban made, and deleted publishers. */
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
}
