/**
 * Queries compiled once and run with new values: on the hot reads (a node, its versions, a page of nodes) Kysely's
 * building and compiling cost more than the database's own work. A query is built with placeholder values, compiled
 * once per dialect, and each run swaps the real values into its parameters, so the SQL text (and the statement the
 * driver prepared for it) is the same every time. Lists of keys are padded to a few fixed lengths by repeating their
 * last key (harmless inside `in (...)`), so that a page of 7 and a page of 9 share one statement too.
 */
import type { CompiledQuery, Compilable } from 'kysely'
import { dialectOf, type Store } from './db'

/** The lengths `in (...)` lists are padded to; longer lists are read in chunks of the largest. */
const LIST_LENGTHS = [1, 4, 16, 32, 64, 128, 500]
const MAX_LIST = LIST_LENGTHS[LIST_LENGTHS.length - 1]!

const MARK = '\u0000arg:'
const placeholder = (name: string) => `${MARK}${name}`

type Values = Record<string, unknown>

/**
 * `build(db, p)` makes the query with `p.x` standing for the value `x`. Only values the builder passes as parameters
 * can be placeholders (a compared value; not a column name, a literal or a limit it inlines).
 */
export function prepared<V extends Values, R>(build: (db: Store, p: Record<keyof V & string, string>) => Compilable<R>) {
  const compiled = new Map<string, CompiledQuery<R>>()
  const names = new Proxy({} as Record<string, string>, { get: (_, key) => placeholder(String(key)) })
  return async (db: Store, values: V): Promise<R[]> => {
    if (withPlugins(db)) return (await db.executeQuery<R>(build(db, values as never))).rows
    const dialect = dialectOf(db)
    let query = compiled.get(dialect)
    if (!query) {
      query = build(db, names).compile()
      compiled.set(dialect, query)
    }
    return (await db.executeQuery<R>({ ...query, parameters: substitute(query.parameters, values) })).rows
  }
}

/** The same, for a query over a list of keys (`keys`, inside `in (...)`): compiled once per padded length. */
export function preparedList<V extends Values, R>(
  build: (db: Store, p: Record<keyof V & string, string>, keys: string[]) => Compilable<R>,
) {
  const compiled = new Map<string, CompiledQuery<R>>()
  const names = new Proxy({} as Record<string, string>, { get: (_, key) => placeholder(String(key)) })
  const run = async (db: Store, values: V, keys: readonly (string | number)[]): Promise<R[]> => {
    if (withPlugins(db)) return (await db.executeQuery<R>(build(db, values as never, keys as string[]))).rows
    const length = LIST_LENGTHS.find((n) => n >= keys.length)!
    const shape = `${dialectOf(db)}:${length}`
    let query = compiled.get(shape)
    if (!query) {
      const listed = Array.from({ length }, (_, i) => placeholder(`#${i}`))
      query = build(db, names, listed).compile()
      compiled.set(shape, query)
    }
    const last = keys[keys.length - 1]
    const all: Values = { ...values }
    for (let i = 0; i < length; i++) all[`#${i}`] = i < keys.length ? keys[i] : last
    return (await db.executeQuery<R>({ ...query, parameters: substitute(query.parameters, all) })).rows
  }
  return async (db: Store, values: V, keys: readonly (string | number)[]): Promise<R[]> => {
    if (!keys.length) return []
    if (keys.length <= MAX_LIST) return run(db, values, keys)
    const out: R[] = []
    for (let i = 0; i < keys.length; i += MAX_LIST) out.push(...(await run(db, values, keys.slice(i, i + MAX_LIST))))
    return out
  }
}

/** A handle with plugins (tests count or hold queries with them) builds every query, so that they see each one. */
const withPlugins = (db: Store) => db.getExecutor().plugins.length > 0

function substitute(parameters: readonly unknown[], values: Values): unknown[] {
  return parameters.map((p) => {
    if (typeof p !== 'string' || !p.startsWith(MARK)) return p
    const name = p.slice(MARK.length)
    if (!(name in values)) throw new Error(`prepared query: no value for ${name}`)
    return values[name]
  })
}
