/** Schema version 1: the store as the first release made it (users, tokens, publishers, nodes, versions, archives, reviews). */
import { sql, type Kysely } from 'kysely'
import type { MigrationContext } from './migration'

const inList = (column: string, values: string[]) => sql`${sql.ref(column)} in (${sql.join(values.map((v) => sql.lit(v)))})`
const text = 'text'
const int = 'integer'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('email', text, (c) => c.notNull().defaultTo(''))
    .addColumn('name', text, (c) => c.notNull().defaultTo(''))
    .addColumn('is_admin', int, (c) => c.notNull().defaultTo(0))
    .addColumn('is_approved', int, (c) => c.notNull().defaultTo(1))
    .addColumn('status', text, (c) =>
      c
        .notNull()
        .defaultTo('active')
        .check(inList('status', ['active', 'banned'])),
    )
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('access_tokens')
    .addColumn('token_hash', text, (c) => c.primaryKey())
    .addColumn('user_id', text, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', text, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('access_tokens_user').on('access_tokens').column('user_id').execute()

  await db.schema
    .createTable('publishers')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('description', text, (c) => c.notNull().defaultTo(''))
    .addColumn('website', text, (c) => c.notNull().defaultTo(''))
    .addColumn('support', text, (c) => c.notNull().defaultTo(''))
    .addColumn('source_code_repo', text, (c) => c.notNull().defaultTo(''))
    .addColumn('logo', text, (c) => c.notNull().defaultTo(''))
    .addColumn('status', text, (c) =>
      c
        .notNull()
        .defaultTo('active')
        .check(inList('status', ['active', 'banned'])),
    )
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('publisher_members')
    .addColumn('publisher_id', text, (c) => c.notNull().references('publishers.id').onDelete('cascade'))
    .addColumn('user_id', text, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', text, (c) => c.notNull().check(inList('role', ['owner', 'member'])))
    .addColumn('created_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('publisher_members_pkey', ['publisher_id', 'user_id'])
    .execute()
  await db.schema.createIndex('publisher_members_user').on('publisher_members').column('user_id').execute()

  await db.schema
    .createTable('publisher_tokens')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('publisher_id', text, (c) => c.notNull().references('publishers.id').onDelete('cascade'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('description', text, (c) => c.notNull().defaultTo(''))
    .addColumn('token_hash', text, (c) => c.notNull().unique())
    .addColumn('token_prefix', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('publisher_tokens_publisher').on('publisher_tokens').column('publisher_id').execute()

  let nodes = db.schema
    .createTable('nodes')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('normalized_id', text, (c) => c.notNull().unique())
    .addColumn('publisher_id', text, (c) => c.notNull().references('publishers.id'))
    .addColumn('name', text, (c) => c.notNull())
  for (const column of ['description', 'author', 'license', 'icon', 'banner_url', 'repository', 'repository_key', 'category']) {
    nodes = nodes.addColumn(column, text, (c) => c.notNull().defaultTo(''))
  }
  for (const column of ['tags_json', 'tags_admin_json', 'supported_os_json', 'supported_accelerators_json']) {
    nodes = nodes.addColumn(column, text, (c) => c.notNull().defaultTo('[]'))
  }
  for (const column of ['os_keys', 'accelerator_keys', 'supported_hostui_version', 'supported_hostui_frontend_version']) {
    nodes = nodes.addColumn(column, text, (c) => c.notNull().defaultTo(''))
  }
  nodes = nodes
    .addColumn('preempted_host_node_names_json', text, (c) => c.notNull().defaultTo('[]'))
    .addColumn('translations_json', text, (c) => c.notNull().defaultTo('{}'))
  for (const column of ['repohost_stars', 'search_ranking', 'downloads', 'review_count', 'star_total']) {
    nodes = nodes.addColumn(column, int, (c) => c.notNull().defaultTo(0))
  }
  await nodes
    .addColumn('status', text, (c) =>
      c
        .notNull()
        .defaultTo('active')
        .check(inList('status', ['active', 'banned', 'deleted'])),
    )
    .addColumn('status_detail', text, (c) => c.notNull().defaultTo(''))
    .addColumn('latest_version_id', text)
    .addColumn('latest_version_status', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('nodes_publisher').on('nodes').column('publisher_id').execute()
  await db.schema.createIndex('nodes_updated_at').on('nodes').column('updated_at').execute()
  await db.schema.createIndex('nodes_order').on('nodes').columns(['search_ranking desc', 'downloads desc', 'id']).execute()

  let versions = db.schema
    .createTable('node_versions')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('node_id', text, (c) => c.notNull().references('nodes.id').onUpdate('cascade'))
    .addColumn('version', text, (c) => c.notNull())
    .addColumn('changelog', text, (c) => c.notNull().defaultTo(''))
    .addColumn('dependencies_json', text, (c) => c.notNull().defaultTo('[]'))
    .addColumn('deprecated', int, (c) => c.notNull().defaultTo(0))
    .addColumn('status', text, (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(inList('status', ['active', 'banned', 'deleted', 'pending', 'flagged'])),
    )
    .addColumn('status_reason', text, (c) => c.notNull().defaultTo(''))
    .addColumn('host_node_extract_status', text, (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(inList('host_node_extract_status', ['pending', 'success', 'failed'])),
    )
    .addColumn('supported_os_json', text, (c) => c.notNull().defaultTo('[]'))
    .addColumn('supported_accelerators_json', text, (c) => c.notNull().defaultTo('[]'))
    .addColumn('supported_hostui_version', text, (c) => c.notNull().defaultTo(''))
    .addColumn('supported_hostui_frontend_version', text, (c) => c.notNull().defaultTo(''))
  for (const column of ['tags_json', 'tags_admin_json']) versions = versions.addColumn(column, text, (c) => c.notNull().defaultTo('[]'))
  await versions
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addUniqueConstraint('node_versions_node_version', ['node_id', 'version'])
    .execute()

  await db.schema
    .createTable('archives')
    .addColumn('version_id', text, (c) => c.primaryKey().references('node_versions.id').onDelete('cascade'))
    .addColumn('sha256', text, (c) => c.notNull())
    .addColumn('size_bytes', int, (c) => c.notNull())
    .addColumn('format', text, (c) => c.notNull().check(inList('format', ['zip', 'tar.gz'])))
    .addColumn('created_at', text, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('host_nodes')
    .addColumn('version_id', text, (c) => c.notNull().references('node_versions.id').onDelete('cascade'))
    .addColumn('name', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('host_nodes_pkey', ['version_id', 'name'])
    .execute()
  await db.schema.createIndex('host_nodes_name').on('host_nodes').column('name').execute()

  await db.schema
    .createTable('reviews')
    .addColumn('node_id', text, (c) => c.notNull().references('nodes.id').onDelete('cascade').onUpdate('cascade'))
    .addColumn('reviewer', text, (c) => c.notNull())
    .addColumn('star', int, (c) => c.notNull().check(sql`star between 1 and 5`))
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('reviews_pkey', ['node_id', 'reviewer'])
    .execute()
}
