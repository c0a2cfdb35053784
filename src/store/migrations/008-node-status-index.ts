/**
 * Schema step 8 of the branch (renumbered when branches merge): an index on nodes(status), so that counting the
 * nodes that are not deleted (the readiness check's index parity, on every probe) reads the index, not every row.
 */
import type { Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.createIndex('nodes_status').on('nodes').column('status').execute()
}
