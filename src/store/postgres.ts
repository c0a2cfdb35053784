/**
 * PostgreSQL behind the same Kysely store, through Bun's built-in SQL client (measured against `pg`:
 * scripts/bench/pg-driver.ts, README). Kysely has no driver for it, so this file is one: a connection is reserved
 * per query or transaction, as Kysely's own PostgresDriver checks one out of a pg.Pool. Numbers come back as
 * numbers, as SQLite gives them.
 */
import { SQL } from 'bun'
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import type { DB } from './schema'
import { withoutPassword } from '../domain/urls'

/** Connections one instance keeps; requests queue for a free one past that. */
const POOL_SIZE = 10
/** A backend that went away is noticed within this time instead of a request hanging on it. */
const CONNECT_TIMEOUT_SECONDS = 5

export const isPostgresUrl = (location: string) => /^postgres(ql)?:\/\//i.test(location)

/** The URL with any password replaced, for logs and error messages. */
export function redactUrl(url: string): string {
  // One that does not parse may still hold its password somewhere: not shown at all.
  return URL.canParse(url) ? withoutPassword(url) : 'postgres://(unparsable)'
}

type Row = Record<string, unknown>
const WRITES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

/** bigint values (counts, sums) become numbers: every one the store reads fits in a double. */
function plainRow(row: Row): Row {
  for (const key in row) if (typeof row[key] === 'bigint') row[key] = Number(row[key])
  return row
}

const OUTCOME_UNKNOWN = Symbol('commit outcome unknown')

/**
 * A COMMIT that failed without the server refusing it (the connection went, the server shut down) may have been
 * applied: the server can commit and go before its answer arrives. Marked, so that a writer that would retry the
 * same change (a download count, which adds) does not apply it twice.
 */
function markCommitOutcomeUnknown(err: unknown): unknown {
  const { errno } = err as { errno?: unknown }
  const refused = typeof errno === 'string' && !CONNECTION_GOING.test(errno)
  if (err instanceof Error && !refused) Object.assign(err, { [OUTCOME_UNKNOWN]: true })
  return err
}

/** The server's SQLSTATEs for a connection it is about to drop: class 08 (connection), 57P (shutdown, restart). */
const CONNECTION_GOING = /^(08|57P)/

/**
 * Whether the connection went, taking its transaction with it (the server rolls it back): the client's own word, or
 * the server's before it went. A narrower question than isDatabaseUnavailable's (store/db.ts: "may this succeed once
 * the database is back?"), which also counts a connection never made, a timeout (the connection may live on, in
 * its transaction) and a full server, and is built on this one.
 */
export function isConnectionLost(err: unknown): boolean {
  const { code, errno } = err as { code?: unknown; errno?: unknown }
  if (typeof code === 'string' && /^ERR_POSTGRES_(CONNECTION|.*CLOSED)|^E(CONNRESET|PIPE)$/.test(code)) return true
  return typeof errno === 'string' && CONNECTION_GOING.test(errno)
}

/** Whether a failed transaction may have committed all the same (its COMMIT's answer never came). */
export const commitOutcomeUnknown = (err: unknown): boolean => err instanceof Error && OUTCOME_UNKNOWN in err

interface ReservedConnection extends DatabaseConnection {
  release(): void
}

class BunSqlDriver implements Driver {
  constructor(private readonly client: SQL) {}

  async init() {}

  async acquireConnection(): Promise<ReservedConnection> {
    const reserved = await this.client.reserve()
    return {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        const result = await reserved.unsafe(query.sql, [...query.parameters])
        const rows = Array.from(result as Iterable<Row>, plainRow) as R[]
        const { command, affectedRows, count } = result as { command?: string; affectedRows?: number; count?: number }
        return command && WRITES.has(command) ? { rows, numAffectedRows: BigInt(affectedRows ?? count ?? 0) } : { rows }
      },
      async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
        throw new Error('streaming queries are not used by the store')
      },
      release: () => reserved.release(),
    }
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings = {}) {
    // A read-only transaction reads one snapshot, as it does on SQLite (the export's rows, archives and serials agree);
    // read committed, the default, saw each statement's own, so writes of other instances landed mid-export.
    const isolation = settings.isolationLevel ?? (settings.accessMode === 'read only' ? 'repeatable read' : undefined)
    const modes = [isolation && `isolation level ${isolation}`, settings.accessMode].filter(Boolean)
    await connection.executeQuery(CompiledQuery.raw(modes.length ? `begin ${modes.join(', ')}` : 'begin'))
  }

  async commitTransaction(connection: DatabaseConnection) {
    try {
      await connection.executeQuery(CompiledQuery.raw('commit'))
    } catch (err) {
      throw markCommitOutcomeUnknown(err)
    }
  }

  async rollbackTransaction(connection: DatabaseConnection) {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'))
    } catch (err) {
      // A connection that went took its transaction with it (the server rolls it back). Kysely rolls back after a
      // failed COMMIT too: its error, not the rollback's, must reach the caller, marked as an unknown outcome.
      if (!isConnectionLost(err)) throw err
    }
  }

  async releaseConnection(connection: DatabaseConnection) {
    ;(connection as ReservedConnection).release()
  }

  async destroy() {
    await this.client.close()
  }
}

export interface PostgresStore {
  db: Kysely<DB>
  /** The client itself, for LISTEN (a subscription it keeps on a connection of its own). */
  client: SQL
}

export function openPostgres(url: string, opts: { poolSize?: number } = {}): PostgresStore {
  const client = new SQL({
    url,
    max: opts.poolSize ?? POOL_SIZE,
    connectionTimeout: CONNECT_TIMEOUT_SECONDS,
    bigint: true,
    connection: { application_name: 'registry-mirror' },
  })
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new BunSqlDriver(client),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  })
  return { db, client }
}
