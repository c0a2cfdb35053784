/** Schema version 3: the video proxy's tasks (who started which provider task, its last known state) and staged images. */
import { sql, type Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('video_tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull().unique())
    .addColumn('caller', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('err_code', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('credits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('request_json', 'text', (c) => c.notNull())
    .addColumn('callback_secret_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('staged_images')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('caller', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text')
    .addColumn('state', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`state in ('pending', 'uploading', 'ready')`),
    )
    .addColumn('media_type', 'text')
    .addColumn('sha256', 'text')
    .addColumn('size_bytes', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('uploaded_at', 'text')
    .execute()
  await db.schema.createIndex('staged_images_created_at').on('staged_images').column('created_at').execute()
  await db.schema.createIndex('staged_images_sha256').on('staged_images').column('sha256').execute()
}
