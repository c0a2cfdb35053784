/** The command line: parse, dispatch, and return an exit code (2 for bad usage or settings). */
import { parseArgs } from 'node:util'
import { envName, loadConfig, SETTINGS } from './config'
import { fixtureJsonSchema } from './domain/fixture'
import { AppError } from './errors'
import { createAccessToken, createUser } from './services/identity'
import { readAudit, type AuditEntry } from './services/audit'
import { changeUser, type UserChange } from './services/user-admin'
import { createStoreSearch } from './search/store-search'
import { createNodeJsonCache } from './services/node-json'
import type { Io } from './io'
import { serve } from './serve'
import { openStore, type Store } from './store/db'
import { prepareDataDir } from './data-dir'
import { join } from 'node:path'
import { readFileSync } from 'node:fs'

const BOOLEAN_SETTINGS = Object.entries(SETTINGS)
  .filter(([, s]) => s.default === 'true' || s.default === 'false')
  .map(([name]) => name)

const USAGE = `registry-mirror: a node registry in one executable

Usage: registry-mirror <command> [options]

Commands:
  serve           run the registry (default data ./data, 127.0.0.1:8080)
  users create    create a user and print an access token
  users promote|demote|ban|unban
                  make a user an admin or not; ban or unban an account
  tokens create   print a new access token for an existing user
  fixture         the format of fixture files (serve --fixture FILE)
  audit           print the audit log, newest first
  help [command]  show help for a command

Run "registry-mirror <command> --help" for its options.`

function serveHelp(): string {
  const rows = Object.entries(SETTINGS).map(([name, s]) => {
    const flag = BOOLEAN_SETTINGS.includes(name) ? `--${name}[=true|false]` : `--${name} VALUE`
    const dflt = s.default === undefined ? '' : ` (default ${s.default})`
    return `  ${flag.padEnd(34)} ${s.help}${dflt}\n  ${''.padEnd(34)} env ${envName(name)}`
  })
  return `Usage: registry-mirror serve [options]\n\nRuns the registry until SIGTERM or SIGINT. The first line on stdout is "listening on http://HOST:PORT".\n\nOptions:\n${rows.join('\n')}\n  --help                             show this help`
}

const USERS_HELP = `Usage: registry-mirror users create --id ID --email EMAIL --name NAME [--admin] [--data DIR]
       registry-mirror users promote|demote|ban|unban --id ID [--data DIR]

create   creates a user and prints a new access token (one line). Use it as "Authorization: Bearer TOKEN".
promote  makes the user an admin (moderation routes, the audit log); demote takes that away.
ban      bans the account: its tokens get 403 on every write; unban lifts that.

Each change is recorded in the audit log. These commands work whether or not a server is running
on the same data directory, and take effect on its next request.`

const AUDIT_HELP = `Usage: registry-mirror audit [--since TIME] [--limit N] [--json] [--data DIR]

Prints the audit log newest first: claims, bans, unbans, status changes, deletions, publishers,
members and tokens created or deleted, and user changes, each with who did it and from where.
--since TIME   only entries at or after TIME (RFC 3339, e.g. 2026-01-02 or 2026-01-02T03:04:05Z)
--limit N      at most N entries (default 50, at most 1000)
--json         one JSON object per line, as GET /admin/audit lists them`

const TOKENS_HELP = `Usage: registry-mirror tokens create --user ID [--data DIR]

Prints a new access token (one line) for an existing user.`

const FIXTURE_HELP = `Usage: registry-mirror fixture --schema

Prints the JSON Schema of the fixture files that "serve --fixture FILE" loads (users with fixed tokens,
publishers with members and fixed publisher tokens, nodes, versions, inline archives).
Start a registry from one:  registry-mirror serve --fixture FILE [--read-only] [--port 0] [--data DIR]`

/** `--flag` -> `--flag=true` and `--no-flag` -> `--flag=false` for boolean settings, so every value parses as a string. */
function normalizeBooleans(argv: string[]): string[] {
  return argv.map((arg) => {
    const name = arg.replace(/^--(no-)?/, '')
    if (!arg.startsWith('--') || arg.includes('=') || !BOOLEAN_SETTINGS.includes(name)) return arg
    return arg.startsWith('--no-') ? `--${name}=false` : `--${name}=true`
  })
}

type Flags = Record<string, string | boolean | undefined>

function parse(argv: string[], names: string[], booleans: string[] = []): Flags {
  const options = Object.fromEntries([
    ...names.map((n) => [n, { type: 'string' as const }]),
    ...[...booleans, 'help'].map((n) => [n, { type: 'boolean' as const }]),
  ])
  return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Flags
}

function dataDir(flags: Flags, io: Io): string {
  return prepareDataDir((flags.data as string | undefined) ?? io.env[envName('data')] ?? SETTINGS.data.default)
}

async function withStore<T>(dir: string, fn: (db: Store) => Promise<T>): Promise<T> {
  const db = await openStore(join(dir, 'registry.db'))
  try {
    return await fn(db)
  } finally {
    await db.destroy()
  }
}

async function usersCreate(argv: string[], io: Io): Promise<number> {
  const flags = parse(argv, ['id', 'email', 'name', 'data'], ['admin'])
  if (flags.help) return (io.out(USERS_HELP), 0)
  const missing = ['id', 'email', 'name'].filter((k) => !flags[k])
  if (missing.length) {
    for (const k of missing) io.err(`--${k}: required`)
    return 2
  }
  const token = await withStore(dataDir(flags, io), (db) =>
    createUser(db, {
      id: flags.id as string,
      email: flags.email as string,
      name: flags.name as string,
      isAdmin: flags.admin === true,
      now: new Date().toISOString(),
    }),
  )
  io.out(token)
  return 0
}

async function tokensCreate(argv: string[], io: Io): Promise<number> {
  const flags = parse(argv, ['user', 'data'])
  if (flags.help) return (io.out(TOKENS_HELP), 0)
  if (!flags.user) return (io.err('--user: required'), 2)
  io.out(await withStore(dataDir(flags, io), (db) => createAccessToken(db, flags.user as string, new Date().toISOString())))
  return 0
}

function fixtureCommand(argv: string[], io: Io): number {
  const flags = parse(argv, [], ['schema'])
  if (flags.help || !flags.schema) return (io.out(FIXTURE_HELP), flags.help ? 0 : 2)
  io.out(JSON.stringify(fixtureJsonSchema(), null, 2))
  return 0
}

const USER_CHANGES: readonly UserChange[] = ['promote', 'demote', 'ban', 'unban']

async function usersChange(change: UserChange, argv: string[], io: Io): Promise<number> {
  const flags = parse(argv, ['id', 'data'])
  if (flags.help) return (io.out(USERS_HELP), 0)
  if (!flags.id) return (io.err('--id: required'), 2)
  const user = await withStore(dataDir(flags, io), (db) =>
    changeUser(
      { db, now: () => new Date(), search: createStoreSearch(db), nodeJson: createNodeJsonCache(db, '') },
      { address: 'cli' },
      flags.id as string,
      change,
    ),
  )
  io.out(`${user.id}: ${user.is_admin === 1 ? 'admin' : 'not admin'}, ${user.status}`)
  return 0
}

function auditLine(e: AuditEntry): string {
  const actor = `${e.actor_id ?? '-'}${e.actor_address ? `@${e.actor_address}` : ''}`
  const change = [e.before === null ? '' : JSON.stringify(e.before), e.after === null ? '' : JSON.stringify(e.after)]
  const detail = change[0] && change[1] ? `${change[0]} -> ${change[1]}` : change[0] || change[1]
  return [e.at, actor, e.action, `${e.target_kind}:${e.target_id}`, detail].filter(Boolean).join('  ')
}

async function auditCommand(argv: string[], io: Io): Promise<number> {
  const flags = parse(argv, ['since', 'limit', 'data'], ['json'])
  if (flags.help) return (io.out(AUDIT_HELP), 0)
  const since = flags.since as string | undefined
  if (since !== undefined && Number.isNaN(Date.parse(since))) return (io.err(`--since: expected an RFC 3339 time (got "${since}")`), 2)
  const limit = flags.limit === undefined ? 50 : Number(flags.limit)
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
    return (io.err(`--limit: expected a whole number from 1 to 1000 (got "${flags.limit}")`), 2)
  const page = await withStore(dataDir(flags, io), (db) =>
    readAudit(db, { since: since === undefined ? undefined : new Date(since).toISOString(), limit }),
  )
  for (const entry of page.entries) io.out(flags.json ? JSON.stringify(entry) : auditLine(entry))
  return 0
}

async function serveCommand(argv: string[], io: Io): Promise<number> {
  const flags = parse(normalizeBooleans(argv), Object.keys(SETTINGS))
  if (flags.help) return (io.out(serveHelp()), 0)
  const { help: _help, ...values } = flags
  const { config, problems } = loadConfig({
    flags: values as Record<string, string | undefined>,
    env: io.env,
    readFile: (path) => readFileSync(path, 'utf8'),
  })
  if (!config) {
    for (const p of problems) io.err(p)
    return 2
  }
  // A fixture describes the whole registry: unless told where to keep it, it gets a fresh directory of its own.
  const dataGiven = values.data !== undefined || io.env[envName('data')] !== undefined
  return serve(config, io, { temporaryData: config.fixture !== undefined && !dataGiven })
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const [command, sub, ...rest] = argv
  try {
    if (!command || command === 'help' || command === '--help' || command === '-h') {
      const topic = command === 'help' ? sub : undefined
      const topics: Record<string, () => string> = {
        serve: serveHelp,
        users: () => USERS_HELP,
        tokens: () => TOKENS_HELP,
        fixture: () => FIXTURE_HELP,
        audit: () => AUDIT_HELP,
      }
      io.out((topics[topic ?? ''] ?? (() => USAGE))())
      return command ? 0 : 2
    }
    if (command === 'serve') return await serveCommand(sub === undefined ? [] : [sub, ...rest], io)
    if (command === 'users' && sub === 'create') return await usersCreate(rest, io)
    if (command === 'users' && USER_CHANGES.includes(sub as UserChange)) return await usersChange(sub as UserChange, rest, io)
    if (command === 'tokens' && sub === 'create') return await tokensCreate(rest, io)
    if (command === 'fixture') return fixtureCommand(sub === undefined ? [] : [sub, ...rest], io)
    if (command === 'audit') return await auditCommand(sub === undefined ? [] : [sub, ...rest], io)
    if ((command === 'users' || command === 'tokens') && (sub === '--help' || sub === undefined)) {
      io.out(command === 'users' ? USERS_HELP : TOKENS_HELP)
      return sub ? 0 : 2
    }
    io.err(`unknown command "${[command, sub].filter(Boolean).join(' ')}"; run "registry-mirror --help"`)
    return 2
  } catch (err) {
    if (err instanceof AppError) return (io.err(err.message), 1)
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      return (io.err(err.message.split('\n')[0]!), 2)
    }
    throw err
  }
}
