/**
 * One description of a schema for both dialects (tables, columns with type, nullability, default and key position,
 * foreign keys with their actions, unique keys, indexes, checks), so that a test can say that the migrations leave
 * SQLite and PostgreSQL with the same schema. What each dialect spells its own way is brought to one spelling:
 * casts and parentheses in defaults and checks, `= ANY (ARRAY[...])` for `IN (...)`, BETWEEN, serial columns.
 */
import type { Database } from 'bun:sqlite'
import type { SQL } from 'bun'

export interface NeutralTable {
  columns: string[]
  foreignKeys: string[]
  indexes: string[]
  checks: string[]
}
export type NeutralSchema = Record<string, NeutralTable>

const ACTIONS: Record<string, string> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' }

/** Lower case, no spaces, quotes, casts or brackets; IN lists and BETWEEN in one spelling. */
export function normalizeExpression(text: string): string {
  return text
    .toLowerCase()
    .replace(/^check\s*/, '')
    .replace(/::[a-z ]+(\[\])?/g, '')
    .replace(/=\s*any\s*\(\s*array\s*\[([^\]]*)\]/g, ' in ($1')
    .replace(/[\s"`()]/g, '')
    .replace(/!=/g, '<>')
    .replace(/(\w+)between(\w+)and(\w+)/g, '$1>=$2and$1<=$3')
}

/** Each CHECK (...) expression in a CREATE TABLE text. */
function sqliteChecks(createSql: string): string[] {
  const out: string[] = []
  const lower = createSql.toLowerCase()
  for (let at = lower.search(/\bcheck\s*\(/); at >= 0;) {
    let i = lower.indexOf('(', at)
    const start = i
    let depth = 0
    for (; i < lower.length; i++) {
      if (lower[i] === '(') depth++
      else if (lower[i] === ')' && --depth === 0) break
    }
    out.push(normalizeExpression(lower.slice(start, i + 1)))
    const rest = lower.slice(i).search(/\bcheck\s*\(/)
    at = rest < 0 ? -1 : i + rest
  }
  return out.sort()
}

const column = (name: string, type: string, notNull: boolean, dflt: string | null, pk: number) =>
  `${name} ${type}${notNull || pk ? ' not null' : ''}${dflt !== null ? ` default ${normalizeExpression(dflt)}` : ''}${pk ? ` pk${pk}` : ''}`

export function describeSqlite(db: Database): NeutralSchema {
  const tables = db
    .query<{ name: string; sql: string }, []>("select name, sql from sqlite_master where type = 'table' and name not like 'sqlite_%'")
    .all()
  return Object.fromEntries(
    tables.map(({ name, sql }) => {
      const columns = db
        .query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, []>(`pragma table_info("${name}")`)
        .all()
        .map((c) => column(c.name, c.type.toLowerCase(), c.notnull === 1, c.dflt_value, c.pk))
        .sort()
      const foreignKeys = db
        .query<{ table: string; from: string; to: string; on_update: string; on_delete: string }, []>(`pragma foreign_key_list("${name}")`)
        .all()
        .map((f) => `${f.from} -> ${f.table}.${f.to} update ${f.on_update.toLowerCase()} delete ${f.on_delete.toLowerCase()}`)
        .sort()
      const indexes = db
        .query<{ name: string; unique: number; origin: string; partial: number }, []>(`pragma index_list("${name}")`)
        .all()
        .filter((i) => i.origin !== 'pk') // the key is in the columns (pkN), as on PostgreSQL
        .map((i) => {
          const cols = db
            .query<{ name: string | null; desc: number }, []>(`pragma index_xinfo("${i.name}")`)
            .all()
            .filter((c) => c.name !== null)
            .map((c) => `${c.name}${c.desc ? ' desc' : ''}`)
          const made = i.partial ? db.query<{ sql: string }, [string]>('select sql from sqlite_master where name = ?').get(i.name)!.sql : ''
          const where = i.partial ? ` where ${normalizeExpression(made.slice(made.toLowerCase().lastIndexOf(' where ') + 7))}` : ''
          return `${i.origin === 'c' ? i.name : 'constraint'}${i.unique ? ' unique' : ''} (${cols.join(', ')})${where}`
        })
        .sort()
      return [name, { columns, foreignKeys, indexes, checks: sqliteChecks(sql) }]
    }),
  )
}

/** The tables of the connection's current schema, but `leaveOut` (PostgreSQL's own bookkeeping). */
export async function describePostgres(sql: SQL, leaveOut: string[] = []): Promise<NeutralSchema> {
  const tables = (await sql`select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`) as { name: string }[]
  const out: NeutralSchema = {}
  for (const { name } of tables) {
    if (leaveOut.includes(name)) continue
    const rel = `${name}`
    const keyCols = (await sql`select a.attname as name, array_position(i.indkey::int2[], a.attnum) as pos
      from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = ${rel}::regclass and i.indisprimary`) as { name: string; pos: number }[]
    // int2vector casts to a 0-based array.
    const pkOf = new Map(keyCols.map((k) => [k.name, Number(k.pos) + 1]))
    const cols = (await sql`select column_name as name, data_type as type, is_nullable as nullable, column_default as dflt
      from information_schema.columns where table_schema = current_schema() and table_name = ${name}`) as {
      name: string
      type: string
      nullable: string
      dflt: string | null
    }[]
    const columns = cols
      .map((c) => {
        // A serial key: SQLite's INTEGER PRIMARY KEY AUTOINCREMENT has no default either.
        const dflt = c.dflt?.startsWith('nextval(') ? null : c.dflt
        return column(c.name, c.type, c.nullable === 'NO', dflt, pkOf.get(c.name) ?? 0)
      })
      .sort()
    const constraints = (await sql`select contype as type, pg_get_constraintdef(oid) as def, confupdtype as upd, confdeltype as del,
      (select array_agg(a.attname order by k.n) from unnest(conkey) with ordinality k(attnum, n)
        join pg_attribute a on a.attrelid = conrelid and a.attnum = k.attnum) as cols,
      (select array_agg(a.attname order by k.n) from unnest(confkey) with ordinality k(attnum, n)
        join pg_attribute a on a.attrelid = confrelid and a.attnum = k.attnum) as fcols,
      confrelid::regclass::text as ftable
      from pg_constraint where conrelid = ${rel}::regclass`) as {
      type: string
      def: string
      upd: string
      del: string
      cols: string[]
      fcols: string[] | null
      ftable: string
    }[]
    const foreignKeys = constraints
      .filter((c) => c.type === 'f')
      .map((c) => `${c.cols[0]} -> ${c.ftable}.${c.fcols![0]} update ${ACTIONS[c.upd]} delete ${ACTIONS[c.del]}`)
      .sort()
    const checks = constraints
      .filter((c) => c.type === 'c')
      .map((c) => normalizeExpression(c.def))
      .sort()
    const uniques = constraints.filter((c) => c.type === 'u').map((c) => `constraint unique (${c.cols.join(', ')})`)
    const plain = (await sql`select c.relname as name, i.indisunique as uniq, pg_get_indexdef(i.indexrelid) as def
      from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = ${rel}::regclass and not i.indisprimary
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`) as { name: string; uniq: boolean; def: string }[]
    const indexes = [
      ...uniques,
      ...plain.map((i) => {
        const [, list, predicate] = /USING \w+ \((.*?)\)(?: WHERE (.*))?$/.exec(i.def)!
        const cols = list!.split(',').map((c) => c.trim().replace(/"/g, '').toLowerCase())
        return `${i.name}${i.uniq ? ' unique' : ''} (${cols.join(', ')})${predicate ? ` where ${normalizeExpression(predicate)}` : ''}`
      }),
    ].sort()
    out[name] = { columns, foreignKeys, indexes, checks }
  }
  return out
}
