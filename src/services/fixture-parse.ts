/** Reads a fixture file's text: JSON, then the schema, then the rules within the file (duplicates, contradictions); every problem at once. */
import { parse as scanJson, type ParseError } from 'jsonc-parser'
import * as v from 'valibot'
import { FixtureSchema, type Fixture } from '../domain/fixture'
import { hashToken } from '../domain/ids'
import { nulPath } from '../domain/nul'
import { normalizeSemver } from '../domain/semver'

/** Where in the file (`nodes[3].versions[0].version`) and what is wrong; never a credential. */
export interface FixtureProblem {
  path: string
  message: string
}

export const formatProblem = (p: FixtureProblem) => (p.path ? `${p.path}: ${p.message}` : p.message)

type PathItem = { key: unknown }

export function problemPath(items: readonly (string | number)[] | readonly PathItem[] | undefined): string {
  let out = ''
  for (const item of items ?? []) {
    const key = typeof item === 'object' ? item.key : item
    out += typeof key === 'number' ? `[${key}]` : out ? `.${String(key)}` : String(key)
  }
  return out
}

function describeIssue(issue: v.BaseIssue<unknown>): FixtureProblem {
  const path = problemPath(issue.path as PathItem[] | undefined)
  // An object's key issues: a key it does not know, or one it needs.
  if (issue.kind === 'schema' && issue.expected === 'never') return { path, message: 'unknown field' }
  if (issue.kind === 'schema' && issue.input === undefined && issue.expected?.startsWith('"')) return { path, message: 'is required' }
  return { path, message: issue.message }
}

/** Problems no schema can see: the same id twice, the same token twice, an archive beside explicit host nodes. */
function checkWithin(f: Fixture): FixtureProblem[] {
  const problems: FixtureProblem[] = []
  const seen = new Map<string, string>()
  const once = (space: string, key: string, path: string, what: string) => {
    const first = seen.get(`${space}\0${key}`)
    if (first) problems.push({ path, message: `${what} as ${first}` })
    else seen.set(`${space}\0${key}`, path)
  }
  f.users?.forEach((u, i) => {
    once('user', u.id, `users[${i}].id`, `the same user id "${u.id}"`)
    u.tokens?.forEach((t, j) => once('token', hashToken(t), `users[${i}].tokens[${j}]`, 'the same token'))
  })
  f.publishers?.forEach((p, i) => {
    once('publisher', p.id, `publishers[${i}].id`, `the same publisher id "${p.id}"`)
    p.members?.forEach((m, j) => once(`member:${p.id}`, m.user, `publishers[${i}].members[${j}].user`, `the same member "${m.user}"`))
    p.tokens?.forEach((t, j) => once('publisher-token', hashToken(t.token), `publishers[${i}].tokens[${j}].token`, 'the same token'))
  })
  f.nodes?.forEach((n, i) => {
    once('node', n.id.toLowerCase(), `nodes[${i}].id`, `the same node id (ignoring case) "${n.id}"`)
    n.versions?.forEach((ver, j) => {
      const at = `nodes[${i}].versions[${j}]`
      once(`version:${n.id.toLowerCase()}`, normalizeSemver(ver.version)!, `${at}.version`, `the same version "${ver.version}"`)
      if (ver.id) once('version-id', ver.id, `${at}.id`, `the same version id "${ver.id}"`)
      if (ver.archive_base64 !== undefined && ver.host_nodes !== undefined) {
        problems.push({ path: `${at}.host_nodes`, message: 'give host_nodes or archive_base64, not both (an archive has its own)' })
      }
    })
  })
  return problems
}

/** Where JSON.parse gave up, as `line L, column C` (its own message has no position). */
function syntaxErrorAt(text: string): string {
  const errors: ParseError[] = []
  scanJson(text, errors, { allowTrailingComma: false, disallowComments: true })
  if (!errors.length) return ''
  const before = text.slice(0, errors[0]!.offset).split('\n')
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`
}

export function parseFixture(text: string): { fixture: Fixture; problems: [] } | { fixture: undefined; problems: FixtureProblem[] } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    const message = `not valid JSON: ${(err as Error).message.replace(/^JSON Parse error: /, '')}`
    return { fixture: undefined, problems: [{ path: syntaxErrorAt(text), message }] }
  }
  // valibot's objects take arrays too; a fixture is one JSON object.
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { fixture: undefined, problems: [{ path: '', message: 'must be a JSON object' }] }
  const nulAt = nulPath(json)
  if (nulAt !== undefined)
    return { fixture: undefined, problems: [{ path: nulAt, message: 'text may not hold a NUL character (\\u0000)' }] }
  const result = v.safeParse(FixtureSchema, json)
  if (!result.success) return { fixture: undefined, problems: result.issues.map(describeIssue) }
  const problems = checkWithin(result.output)
  return problems.length ? { fixture: undefined, problems } : { fixture: result.output, problems: [] }
}
