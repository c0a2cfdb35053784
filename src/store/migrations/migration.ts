/** What a migration is: a forward-only step of the schema, written once with Kysely's builder for every dialect. */
import type { Kysely } from 'kysely'

export type Dialect = 'sqlite' | 'postgres'

export interface MigrationContext {
  dialect: Dialect
  /** The time the migration runs, for rows it writes (RFC 3339). */
  now: string
}

export interface Migration {
  /** The schema version this migration produces: 1, 2, 3, ... with no gaps. */
  version: number
  name: string
  /**
   * Frozen in time: migrations never import the application's tables or queries, only Kysely with `any`
   * tables, so that later code changes cannot alter what an old step did.
   */
  up(db: Kysely<any>, ctx: MigrationContext): Promise<void>
}
