/** The command line: parse, dispatch, and return an exit code (2 for bad usage or settings). */
import { parseCommandArgs } from './cli-args'
import { envName, loadConfig, SETTINGS } from './config'
import { fixtureJsonSchema } from './domain/fixture'
import { AppError } from './errors'
import { EXPORT_HELP, exportCommand, IMPORT_HELP, importCommand } from './bundle-commands'
import { AUDIT_HELP, auditCommand } from './cli-audit'
import { BLOBS_HELP, blobsCommand } from './cli-blobs'
import { credentialsCommand, TOKENS_HELP, UsageError, USERS_HELP } from './cli-credentials'
import type { Io } from './io'
import { printUsage } from './cli-usage'
import { serve } from './serve'
import { StoreOpenError } from './serve-backends'
import { COPY_HELP, copyCommand } from './copy-command'
import { SYNC_HELP, syncCommand } from './sync-command'
import { DataDirError, existingStoreFile, prepareDataDir } from './data-dir'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { version as VERSION } from '../package.json'

const BOOLEAN_SETTINGS = Object.entries(SETTINGS)
  .filter(([, s]) => s.default === 'true' || s.default === 'false')
  .map(([name]) => name)

const USAGE = `registry-mirror: a node registry in one executable

Usage: registry-mirror <command> [options]

Commands:
  serve           run the registry (default data ./data, 127.0.0.1:8080)
  users create    create a user and print an access token
  users list      list users
  tokens create   print a new access token for an existing user
  tokens list     list a user's tokens, masked, with expiry, last use and state
  tokens revoke   revoke a token by id
  users promote|demote|ban|unban
                  make a user an admin or not; ban or unban an account
  audit           print the audit log, newest first
  blobs check     count rows whose archive bytes are missing, and stored bytes no row references
  blobs sweep     remove stored bytes no row references (older than a grace; --dry-run counts)
  sync            copy an upstream registry into the data directory (--from URL)
  export          write this registry (or its changes since a serial) to one file, for an air gap
  import          apply a file written by export
  copy-store      move a data directory's registry onto PostgreSQL (and a bucket), for several instances
  fixture         the format of fixture files (serve --fixture FILE)
  help [command]  show help for a command
  version         print the version (also --version)

Run "registry-mirror <command> --help" for its options.`

function serveHelp(): string {
  const rows = Object.entries(SETTINGS).map(([name, s]) => {
    const flag = BOOLEAN_SETTINGS.includes(name) ? `--${name}[=true|false]` : `--${name} VALUE`
    const dflt = s.default === undefined ? '' : ` (default ${s.default})`
    return `  ${flag.padEnd(34)} ${s.help}${dflt}\n  ${''.padEnd(34)} env ${envName(name)}`
  })
  return `Usage: registry-mirror serve [options]\n\nRuns the registry until SIGTERM or SIGINT. The first line on stdout is "listening on http://HOST:PORT".\n\nOptions:\n${rows.join('\n')}\n  --help                             show this help`
}

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
  return parseCommandArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Flags
}

/**
 * Where a command's store is: --database (a PostgreSQL URL), else registry.db in the data directory, which only a
 * command that `create`s may make; the others need one there.
 */
function storeOf(flags: Flags, io: Io, opts: { create?: boolean } = {}): string {
  // Checked as serve checks it: anything else was opened as an SQLite file of that name (made, and answered as empty).
  const given = loadConfig({ flags: { database: flags.database as string | undefined }, env: io.env }, { database: SETTINGS.database })
  if (!given.config) throw new UsageError(given.problems.join('\n'))
  const database = given.config.database
  if (database) return database
  const dir = (flags.data as string | undefined) ?? io.env[envName('data')] ?? SETTINGS.data.default
  return opts.create ? join(prepareDataDir(dir), 'registry.db') : existingStoreFile(dir)
}

function fixtureCommand(argv: string[], io: Io): number {
  const flags = parse(argv, [], ['schema'])
  if (flags.help || !flags.schema) return printUsage(io, FIXTURE_HELP, flags.help === true)
  io.out(JSON.stringify(fixtureJsonSchema(), null, 2))
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
  const asksHelp = (arg: string | undefined) => arg === '--help' || arg === '-h'
  try {
    if (!command || command === 'help' || asksHelp(command)) {
      // Every command takes --help, `help` and `version` too: `help --help` is the general usage.
      const topic = command === 'help' && !asksHelp(sub) ? sub : undefined
      const topics: Record<string, () => string> = {
        serve: serveHelp,
        users: () => USERS_HELP,
        tokens: () => TOKENS_HELP,
        fixture: () => FIXTURE_HELP,
        audit: () => AUDIT_HELP,
        blobs: () => BLOBS_HELP,
        'copy-store': () => COPY_HELP,
        sync: () => SYNC_HELP,
        export: () => EXPORT_HELP,
        import: () => IMPORT_HELP,
        version: () => 'Usage: registry-mirror version (or --version)\n\nPrints the version of this executable.',
      }
      if (topic !== undefined && !Object.hasOwn(topics, topic)) {
        io.err(`no help on "${topic}": it is not a command`)
        io.err(USAGE)
        return 2
      }
      return printUsage(io, topic === undefined ? USAGE : topics[topic]!(), command !== undefined)
    }
    if (command === 'version' && asksHelp(sub)) return runCli(['help', 'version'], io)
    if (command === 'version' || command === '--version' || command === '-v') return (io.out(`registry-mirror ${VERSION}`), 0)
    if (command === 'serve') return await serveCommand(sub === undefined ? [] : [sub, ...rest], io)
    if ((command === 'users' || command === 'tokens') && sub !== undefined && !sub.startsWith('-')) {
      const code = await credentialsCommand(command, sub, rest, io, (flags, opts) => storeOf(flags, io, opts))
      if (code !== undefined) return code
    }
    if (command === 'fixture') return fixtureCommand(sub === undefined ? [] : [sub, ...rest], io)
    const args = sub === undefined ? [] : [sub, ...rest]
    if (command === 'sync') return await syncCommand(args, io)
    if (command === 'export') return await exportCommand(args, io)
    if (command === 'import') return await importCommand(args, io)
    if (command === 'copy-store') return await copyCommand(args, io)
    if (command === 'blobs') return await blobsCommand(sub, rest, io)
    if (command === 'audit') return await auditCommand(args, io, (flags) => storeOf(flags, io))
    if ((command === 'users' || command === 'tokens') && (sub === '--help' || sub === undefined)) {
      return printUsage(io, command === 'users' ? USERS_HELP : TOKENS_HELP, sub !== undefined)
    }
    io.err(`unknown command "${[command, sub].filter(Boolean).join(' ')}"; run "registry-mirror --help"`)
    return 2
  } catch (err) {
    if (err instanceof AppError || err instanceof StoreOpenError || err instanceof DataDirError) return (io.err(err.message), 1)
    // The file system refusing a path given (an export's FILE in a missing directory, no permission): its own words.
    if (err instanceof Error && /^E[A-Z]+$/.test(String((err as { code?: unknown }).code))) return (io.err(err.message), 1)
    if (err instanceof UsageError) {
      for (const line of err.message.split('\n')) io.err(line)
      return 2
    }
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      // Node's own words, every line: "... is ambiguous" goes on to say how to give a value starting with "-".
      for (const line of err.message.split('\n')) io.err(line)
      return 2
    }
    throw err
  }
}
