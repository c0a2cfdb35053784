/**
 * The operator's commands for users and their access tokens: `users create|list|promote|demote|ban|unban`,
 * `tokens create|list|revoke`.
 * They open the store in the data directory themselves, so they work whether or not a server runs on it; a
 * server sees a revoked or expired token at once (it reads tokens from the store on every request).
 */
import { parseCommandArgs } from './cli-args'
import * as v from 'valibot'
import { forTerminal, type Io } from './io'
import { AppError } from './errors'
import { createStoreSearch } from './search/store-search'
import type { Actor } from './services/access'
import { createAccessToken, listAccessTokens, revokeToken } from './services/access-tokens'
import type { WriteDeps } from './services/changes'
import { checkNewUser, createUser, listUsers } from './services/identity'
import { changeUser, type UserChange } from './services/user-admin'
import { createNodeJsonCache } from './services/node-json'
import { openStoreAt } from './serve-backends'
import type { Store } from './store/db'

export const USERS_HELP = `Usage:
  registry-mirror users create --id ID --email EMAIL --name NAME [--admin] [--expires DAYS] [--data DIR | --database URL]
  registry-mirror users list [--json] [--data DIR | --database URL]
  registry-mirror users promote|demote|ban|unban --id ID [--data DIR | --database URL]

create: makes a user and prints a new access token (one line). Use it as "Authorization: Bearer TOKEN".
        --expires DAYS makes the token stop working after that many days (default: never).
list:   every user with name, email, admin, status, creation time and how many working tokens they hold.
promote makes the user an admin (moderation routes, the audit log); demote takes that away.
ban     bans the account: its tokens get 403 on every write; unban lifts that.
All work whether or not a server is running on the same data directory (or PostgreSQL database: --database,
as serve takes it); changes are in the audit log and take effect on the server's next request.`

export const TOKENS_HELP = `Usage:
  registry-mirror tokens create --user ID [--expires DAYS] [--data DIR | --database URL]
  registry-mirror tokens list --user ID [--json] [--data DIR | --database URL]
  registry-mirror tokens revoke TOKEN_ID [--data DIR | --database URL]

create: prints a new access token (one line) for an existing user; --expires DAYS as for "users create".
list:   the user's tokens: id, the token masked (first 4 characters), created, expires, last used (to within
        5 minutes) and state (active, expired, revoked). Tokens themselves are never shown again.
revoke: the token with this id (from "tokens list") gets 401 from the next request on, also on a running server.
Creating and revoking are recorded in the audit log (never the token).`

const USER_CHANGES: readonly UserChange[] = ['promote', 'demote', 'ban', 'unban']

/** Who the audit log names for a command: no user, from the command line. */
const CLI_ACTOR: Actor = { address: 'cli' }

const Days = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'expected a whole number of days from 1 to 36500'),
  v.transform(Number),
  v.number(),
  v.minValue(1, 'expected a whole number of days from 1 to 36500'),
  v.maxValue(36500, 'expected a whole number of days from 1 to 36500'),
)

export type Flags = Record<string, string | boolean | undefined>

export class UsageError extends Error {}

export function parse(argv: string[], strings: string[], booleans: string[], positionals = 0): { flags: Flags; args: string[] } {
  const options = Object.fromEntries([
    ...[...strings, 'data', 'database'].map((n) => [n, { type: 'string' as const }]),
    ...[...booleans, 'help'].map((n) => [n, { type: 'boolean' as const }]),
  ])
  const parsed = parseCommandArgs({ args: argv, options, strict: true, allowPositionals: positionals > 0 })
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`)
  return { flags: parsed.values as Flags, args: parsed.positionals }
}

function required(flags: Flags, names: string[]): void {
  const missing = names.filter((k) => !flags[k])
  if (missing.length) throw new UsageError(missing.map((k) => `--${k}: required`).join('\n'))
}

function expiresInDays(flags: Flags): number | undefined {
  if (flags.expires === undefined) return undefined
  const result = v.safeParse(Days, flags.expires)
  if (!result.success) throw new UsageError(`--expires: ${result.issues[0].message} (got "${flags.expires}")`)
  return result.output
}

/** A command's store and clock; it writes no nodes or publishers, so the store search and a cache of its own complete commitWrite's needs. */
export async function withDeps<T>(location: string, fn: (deps: WriteDeps) => Promise<T>): Promise<T> {
  const db: Store = await openStoreAt(location)
  try {
    return await fn({ db, now: () => new Date(), search: createStoreSearch(db), nodeJson: createNodeJsonCache(db, '') })
  } finally {
    await db.destroy()
  }
}

/** Rows as aligned columns under a header; null shows as "-"; control characters escaped before measuring. */
export function table(header: string[], rows: (string | number | null)[][]): string[] {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null ? '-' : forTerminal(String(c)))))]
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)))
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
}

/** Runs `users SUB` or `tokens SUB`; returns the exit code, or undefined for an unknown subcommand. */
export async function credentialsCommand(
  command: 'users' | 'tokens',
  sub: string,
  argv: string[],
  io: Io,
  storeOf: (flags: Flags, opts?: { create?: boolean }) => string,
): Promise<number | undefined> {
  const help = command === 'users' ? USERS_HELP : TOKENS_HELP
  const run = async (strings: string[], booleans: string[], positionals: number, body: (flags: Flags, args: string[]) => Promise<void>) => {
    const { flags, args } = parse(argv, strings, booleans, positionals)
    if (flags.help) return (io.out(help), 0)
    try {
      await body(flags, args)
    } catch (err) {
      // A value the registry refuses as given (an id of characters it does not take, a name past its length) was
      // typed on the command line: a usage error, as a flag it cannot parse is.
      if (err instanceof AppError && err.status === 400) throw new UsageError(err.message)
      throw err
    }
    return 0
  }
  const key = `${command} ${sub}`
  if (key === 'users create')
    return run(['id', 'email', 'name', 'expires'], ['admin'], 0, async (flags) => {
      required(flags, ['id', 'email', 'name'])
      const input = {
        id: flags.id as string,
        email: flags.email as string,
        name: flags.name as string,
        isAdmin: flags.admin === true,
        expiresInDays: expiresInDays(flags),
      }
      checkNewUser(input) // a mistyped id makes no registry where --data points
      io.out(await withDeps(storeOf(flags, { create: true }), (deps) => createUser(deps, CLI_ACTOR, input)))
    })
  if (key === 'users list')
    return run([], ['json'], 0, async (flags) => {
      const users = await withDeps(storeOf(flags), (deps) => listUsers(deps))
      if (flags.json) return io.out(JSON.stringify(users, null, 2))
      const rows = users.map((u) => [u.id, u.name, u.email, u.isAdmin ? 'yes' : 'no', u.status, u.activeTokens, u.createdAt])
      for (const line of table(['ID', 'NAME', 'EMAIL', 'ADMIN', 'STATUS', 'TOKENS', 'CREATED'], rows)) io.out(line)
    })
  if (command === 'users' && USER_CHANGES.includes(sub as UserChange))
    return run(['id'], [], 0, async (flags) => {
      required(flags, ['id'])
      const user = await withDeps(storeOf(flags), (deps) => changeUser(deps, CLI_ACTOR, flags.id as string, sub as UserChange))
      io.out(`${user.id}: ${user.is_admin === 1 ? 'admin' : 'not admin'}, ${user.status}`)
    })
  if (key === 'tokens create')
    return run(['user', 'expires'], [], 0, async (flags) => {
      required(flags, ['user'])
      const days = expiresInDays(flags)
      io.out(await withDeps(storeOf(flags), (deps) => createAccessToken(deps, CLI_ACTOR, flags.user as string, { expiresInDays: days })))
    })
  if (key === 'tokens list')
    return run(['user'], ['json'], 0, async (flags) => {
      required(flags, ['user'])
      const tokens = await withDeps(storeOf(flags), (deps) => listAccessTokens(deps, flags.user as string))
      if (flags.json) return io.out(JSON.stringify(tokens, null, 2))
      const rows = tokens.map((t) => [t.id, t.token, t.createdAt, t.expiresAt ?? 'never', t.lastUsedAt ?? 'never', t.state])
      for (const line of table(['ID', 'TOKEN', 'CREATED', 'EXPIRES', 'LAST USED', 'STATE'], rows)) io.out(line)
    })
  if (key === 'tokens revoke')
    return run([], [], 1, async (flags, [id]) => {
      if (!id) throw new UsageError('the id of the token to revoke is required (see "tokens list --user ID")')
      const { token, alreadyRevoked } = await withDeps(storeOf(flags), (deps) => revokeToken(deps, CLI_ACTOR, id))
      io.out(
        alreadyRevoked
          ? `token ${token.id} of user ${token.userId} was already revoked at ${token.revokedAt}`
          : `revoked token ${token.id} of user ${token.userId}`,
      )
    })
  return undefined
}
