/**
 * Schema version 14: each publisher membership gets an id of its own, a UUID v4, shown as `members[].id` (ids the
 * server makes are UUID v4); it was rendered as `{publisherId}:{userId}`. Existing memberships get new ones.
 */
import type { Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('publisher_members')
    .addColumn('id', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
  const members = await db.selectFrom('publisher_members').select(['publisher_id', 'user_id']).execute()
  for (const m of members) {
    await db
      .updateTable('publisher_members')
      .set({ id: crypto.randomUUID() })
      .where('publisher_id', '=', m.publisher_id)
      .where('user_id', '=', m.user_id)
      .execute()
  }
  await db.schema.createIndex('publisher_members_id').on('publisher_members').column('id').unique().execute()
}
