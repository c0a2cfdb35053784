/**
 * Schema version 16: blob intents, and the indexes that find a blob's rows by its SHA-256. A writer records an intent
 * for bytes before it makes them visible (or binds a row to bytes already stored) and drops it in the transaction
 * that writes its row; `blobs sweep` never deletes bytes that an intent or a row names (services/blob-sweep.ts).
 * The indexes let the sweep and `blobs check` look a batch of hashes up without reading whole tables.
 */
import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('blob_intents')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('blob_intents_pkey', ['id', 'sha256'])
    .execute()
  await db.schema.createIndex('blob_intents_sha256').on('blob_intents').column('sha256').execute()
  await db.schema.createIndex('archives_sha256').on('archives').column('sha256').execute()
  await db.schema.createIndex('mirror_archives_sha256').on('mirror_archives').column('sha256').execute()
}
