/**
 * Schema version 6: mirroring. The upstreams this registry follows (with their cursors and how fresh they are),
 * where each mirrored entity came from (and the status and owner the upstream last gave it, so that local
 * moderation and claims are told apart from the upstream's), and the upstream archives with their pinned SHA-256.
 */
import { sql, type Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('mirror_sources')
    // The upstream's base URL, or "bundle:<instance id>" for bundles carried across an air gap.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('feed', 'public', 'bundle')`))
    .addColumn('upstream_instance', 'text', (c) => c.notNull().defaultTo(''))
    // Feeds and bundles: the last serial applied. The public registry: when the last completed pass started.
    .addColumn('cursor_serial', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cursor_time', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('archives', 'text', (c) =>
      c
        .notNull()
        .defaultTo('none')
        .check(sql`archives in ('none', 'eager', 'lazy')`),
    )
    .addColumn('runs_since_full', 'integer', (c) => c.notNull().defaultTo(0))
    // Set while a full pass is under way, so that a killed one resumes instead of starting over.
    .addColumn('full_pass_started_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_success_at', 'text')
    .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('last_summary_json', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('mirror_origins')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('publisher', 'node', 'version')`))
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull().references('mirror_sources.id'))
    // What the upstream said last; a row that differs from it was changed here (moderation, a claim) and keeps that.
    .addColumn('applied_status', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('applied_owner', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('synced_at', 'text', (c) => c.notNull())
    // Last seen in a full pass: what a completed full pass did not see is gone upstream.
    .addColumn('checked_at', 'text', (c) => c.notNull())
    // Versions: when their host node names were asked for (the public registry serves them separately).
    .addColumn('host_nodes_at', 'text')
    .addPrimaryKeyConstraint('mirror_origins_pk', ['kind', 'entity_id'])
    .execute()
  await db.schema.createIndex('mirror_origins_source').on('mirror_origins').columns(['source_id', 'kind', 'checked_at']).execute()

  await db.schema
    .createTable('mirror_archives')
    .addColumn('version_id', 'text', (c) => c.primaryKey().references('node_versions.id').onDelete('cascade'))
    .addColumn('source_id', 'text', (c) => c.notNull().references('mirror_sources.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    // Pinned on first fetch (or announced by an upstream registry-mirror): other bytes are refused, never served.
    .addColumn('sha256', 'text')
    .addColumn('size_bytes', 'integer')
    .addColumn('etag', 'text')
    .addColumn('problem', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('problem_at', 'text')
    .execute()

  // The upstream's rating of a mirrored node (it sends the mean, not the reviews); null for local nodes.
  await db.schema.alterTable('nodes').addColumn('mirrored_rating', 'double precision').execute()
}
