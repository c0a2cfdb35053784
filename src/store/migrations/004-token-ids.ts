/**
 * Schema version 4: access tokens get an id (to list and revoke them by), the first characters shown masked,
 * an optional expiry, the time of last use, and revocation. The table is rebuilt (SQLite cannot add a key
 * to a table); existing tokens keep working and get new ids.
 */
import type { Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('access_tokens_7')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    // Empty for tokens made before version 7: only their hash was kept.
    .addColumn('token_prefix', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .addUniqueConstraint('access_tokens_hash', ['token_hash'])
    .execute()
  const existing = await db.selectFrom('access_tokens').select(['token_hash', 'user_id', 'created_at']).execute()
  for (let i = 0; i < existing.length; i += 100) {
    await db
      .insertInto('access_tokens_7')
      .values(existing.slice(i, i + 100).map((row) => ({ id: crypto.randomUUID(), ...row })))
      .execute()
  }
  await db.schema.dropTable('access_tokens').execute()
  await db.schema.alterTable('access_tokens_7').renameTo('access_tokens').execute()
  await db.schema.createIndex('access_tokens_user').on('access_tokens').column('user_id').execute()
}
