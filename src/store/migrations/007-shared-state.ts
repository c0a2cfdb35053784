/**
 * Schema version 7: what several instances on one database must share instead of keeping in memory or in their
 * data directories: named secrets (the URL-signing key) and fixed-window rate limit counters.
 */
import type { Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  // Made once by whichever instance starts first; the others read it.
  await db.schema
    .createTable('registry_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  // One row per limited key (say, anonymous reviews from one address): its window's start and count so far.
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_started_at', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('rate_limits_window').on('rate_limits').column('window_started_at').execute()
}
