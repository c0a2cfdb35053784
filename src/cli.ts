/** The command line: parse, dispatch, and return an exit code (2 for bad usage or settings). */
import { parseArgs } from 'node:util'
import { envName, loadConfig, SETTINGS } from './config'
import { AppError } from './errors'
import { createAccessToken, createUser } from './services/identity'
import type { Io } from './io'
import { serve } from './serve'
import { openStore, type Store } from './store/db'
import { prepareDataDir } from './data-dir'
import { join } from 'node:path'
import { EXPORT_HELP, exportCommand, IMPORT_HELP, importCommand } from './bundle-commands'
import { SYNC_HELP, syncCommand } from './sync-command'

const BOOLEAN_SETTINGS = Object.entries(SETTINGS)
  .filter(([, s]) => s.default === 'true' || s.default === 'false')
  .map(([name]) => name)

const USAGE = `registry-mirror: a node registry in one executable

Usage: registry-mirror <command> [options]

Commands:
  serve           run the registry (default data ./data, 127.0.0.1:8080)
  users create    create a user and print an access token
  tokens create   print a new access token for an existing user
  sync            copy an upstream registry into the data directory (--from URL)
  export          write this registry (or its changes since a serial) to one file, for an air gap
  import          apply a file written by export
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

Creates a user and prints a new access token (one line). Use it as "Authorization: Bearer TOKEN".
Works whether or not a server is running on the same data directory.`

const TOKENS_HELP = `Usage: registry-mirror tokens create --user ID [--data DIR]

Prints a new access token (one line) for an existing user.`

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

async function serveCommand(argv: string[], io: Io): Promise<number> {
  const flags = parse(normalizeBooleans(argv), Object.keys(SETTINGS))
  if (flags.help) return (io.out(serveHelp()), 0)
  const { help: _help, ...values } = flags
  const { config, problems } = loadConfig({ flags: values as Record<string, string | undefined>, env: io.env })
  if (!config) {
    for (const p of problems) io.err(p)
    return 2
  }
  return serve(config, io)
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
        sync: () => SYNC_HELP,
      }
      io.out((topic && topics[topic]?.()) || USAGE)
      return command ? 0 : 2
    }
    if (command === 'serve') return await serveCommand(sub === undefined ? [] : [sub, ...rest], io)
    const args = sub === undefined ? [] : [sub, ...rest]
    if (command === 'sync') return await syncCommand(args, io)
    if (command === 'export') return await exportCommand(args, io)
    if (command === 'import') return await importCommand(args, io)
    if (command === 'users' && sub === 'create') return await usersCreate(rest, io)
    if (command === 'tokens' && sub === 'create') return await tokensCreate(rest, io)
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
