/** Handles on a store that let a test see (or fail) each query before it is sent. */
import type { QueryId, RootOperationNode } from 'kysely'
import type { Store } from '../../src/store/db'

/** A handle on `db` that shows each query to `see` before it is sent; a throw from `see` fails the query with it. */
export function watchQueries(db: Store, see: (query: RootOperationNode, queryId: QueryId) => void): Store {
  return db.withPlugin({
    transformQuery(args) {
      see(args.node, args.queryId)
      return args.node
    },
    transformResult: async (args) => args.result,
  })
}

/** Whether the query names the table anywhere (its target, a join, a subquery). */
export const namesTable = (query: RootOperationNode, table: string): boolean => JSON.stringify(query).includes(`"${table}"`)

/** Whether the query is a SELECT naming the table. */
export const readsTable = (query: RootOperationNode, table: string): boolean => query.kind === 'SelectQueryNode' && namesTable(query, table)
