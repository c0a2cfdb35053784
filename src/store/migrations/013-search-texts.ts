/**
 * Schema version 13: each node's searched text in narrow rows of their own, for the SQL search that answers while
 * the index warms. It scanned the node rows (five LIKEs on each) and every host node name of every version: at
 * 100,000 nodes a keyword took 88 ms and a host node 130 ms at the median, 42 and 29 ms on these. Filled here from
 * the rows, so that the search never meets a node without its texts; every write of a node's document writes them
 * after.
 */
import { sql, type Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, ctx: MigrationContext): Promise<void> {
  // id, name, description, author and tags_json, a line each.
  await db.schema
    .createTable('node_search_keywords')
    .addColumn('node_id', 'text', (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
    .addColumn('text', 'text', (c) => c.notNull())
    .execute()
  // The host node names of the node's latest version, a line each ('' without any).
  await db.schema
    .createTable('node_search_host_names')
    .addColumn('node_id', 'text', (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
    .addColumn('names', 'text', (c) => c.notNull())
    .execute()
  const joined = ctx.dialect === 'postgres' ? sql`string_agg(name, ${'\n'})` : sql`group_concat(name, ${'\n'})`
  await sql`insert into node_search_keywords (node_id, text)
    select id, id || ${'\n'} || name || ${'\n'} || description || ${'\n'} || author || ${'\n'} || tags_json from nodes`.execute(db)
  await sql`insert into node_search_host_names (node_id, names)
    select nodes.id, coalesce((select ${joined} from host_nodes where host_nodes.version_id = nodes.latest_version_id), '')
    from nodes`.execute(db)
}
