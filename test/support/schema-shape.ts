/** A dialect-neutral description of a SQLite schema (tables, columns, keys, indexes, checks), for comparing schemas. */
import type { Database } from 'bun:sqlite'

/** Each CHECK (...) expression in a CREATE TABLE text, lower-cased and without spaces. */
function checks(createSql: string): string[] {
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
    out.push(lower.slice(start, i + 1).replace(/[\s"`]/g, ''))
    const rest = lower.slice(i).search(/\bcheck\s*\(/)
    at = rest < 0 ? -1 : i + rest
  }
  return out.sort()
}

export function describeSqliteSchema(db: Database) {
  const tables = db
    .query<{ name: string; sql: string }, []>(
      "select name, sql from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name",
    )
    .all()
  return Object.fromEntries(
    tables.map(({ name, sql }) => {
      const columns = db
        .query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, []>(`pragma table_info("${name}")`)
        .all()
        .map(
          (c) =>
            `${c.name} ${c.type.toLowerCase()}${c.notnull ? ' not null' : ''}${c.dflt_value !== null ? ` default ${c.dflt_value}` : ''}${c.pk ? ` pk${c.pk}` : ''}`,
        )
        .sort()
      const foreignKeys = db
        .query<{ table: string; from: string; to: string; on_update: string; on_delete: string }, []>(`pragma foreign_key_list("${name}")`)
        .all()
        .map((f) => `${f.from} -> ${f.table}.${f.to} update ${f.on_update.toLowerCase()} delete ${f.on_delete.toLowerCase()}`)
        .sort()
      const indexes = db
        .query<{ name: string; unique: number; origin: string; partial: number }, []>(`pragma index_list("${name}")`)
        .all()
        .map((i) => {
          const cols = db
            .query<{ name: string | null; desc: number }, []>(`pragma index_xinfo("${i.name}")`)
            .all()
            .filter((c) => c.name !== null)
            .map((c) => `${c.name}${c.desc ? ' desc' : ''}`)
          // Automatic indexes get generated names; what matters is what they cover.
          const label = i.origin === 'c' ? i.name : i.origin
          return `${label}${i.unique ? ' unique' : ''} (${cols.join(', ')})`
        })
        .sort()
      return [name, { columns, foreignKeys, indexes, checks: checks(sql) }]
    }),
  )
}
