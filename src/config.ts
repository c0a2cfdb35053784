/** Settings of `serve`: one table gives each its flag, environment variable, default, validation and help. */
import * as v from 'valibot'

const int = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `expected a whole number from ${min} to ${max}`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `expected a whole number from ${min} to ${max}`),
    v.maxValue(max, `expected a whole number from ${min} to ${max}`),
  )
const bool = v.pipe(
  v.string(),
  v.toLowerCase(),
  v.picklist(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], 'expected true or false'),
  v.transform((s) => ['true', '1', 'yes', 'on'].includes(s)),
)
const httpUrl = v.pipe(
  v.string(),
  v.url('expected an absolute http(s) URL'),
  v.regex(/^https?:\/\//i, 'expected an absolute http(s) URL'),
  v.transform((s) => s.replace(/\/+$/, '')),
)
const text = v.pipe(v.string(), v.trim(), v.minLength(1, 'expected a non-empty value'))
const rate = v.pipe(
  v.string(),
  v.regex(/^\d+(\.\d+)?$/, 'expected a number of requests per second (0 for no limit)'),
  v.transform(Number),
  v.number(),
)
const archiveMode = v.pipe(
  v.string(),
  v.toLowerCase(),
  v.transform((s) => (['true', 'eager', 'all'].includes(s) ? 'eager' : ['false', 'none'].includes(s) ? 'none' : s)),
  v.picklist(['none', 'eager', 'lazy'], 'expected none, eager (all archives now) or lazy (each on its first download)'),
)

/** Settings of the upstream client, shared by `sync` and `serve --sync-from` (same environment variables). */
const UPSTREAM_SETTINGS = {
  'sync-concurrency': { schema: int(1, 64), default: '4', help: 'upstream requests in flight at once' },
  'sync-rate': { schema: rate, default: '0', help: 'upstream requests per second at most; 0 for no limit' },
  'sync-timeout': { schema: int(1, 3600), default: '30', help: 'seconds to wait for an upstream answer, or for each part of a body' },
  'sync-retries': {
    schema: int(0, 100),
    default: '5',
    help: 'retries of a failed upstream request (5xx, 429, timeouts, cut-off bodies), with backoff',
  },
  'sync-full-every': {
    schema: int(1, 1_000_000),
    default: '24',
    help: 'every this many runs, a full pass (records deletions, checks archives)',
  },
} as const

const SETTINGS_BASE = {
  data: { schema: text, default: './data', help: 'directory of the store, archives and signing key' },
} as const

export const SETTINGS = {
  data: SETTINGS_BASE.data,
  host: { schema: text, default: '127.0.0.1', help: 'address to listen on' },
  port: { schema: int(0, 65535), default: '8080', help: 'port to listen on; 0 picks a free one' },
  'public-url': { schema: httpUrl, default: undefined, help: 'base of every absolute URL handed out (default http://HOST:PORT)' },
  'max-upload-bytes': { schema: int(1, Number.MAX_SAFE_INTEGER), default: '209715200', help: 'largest archive accepted' },
  'auto-approve': { schema: bool, default: 'true', help: 'make valid uploads active at once; false keeps them pending for an admin' },
  'max-publishers-per-user': { schema: int(1, 1_000_000), default: '5', help: 'publishers one user may belong to' },
  'require-review-auth': { schema: bool, default: 'false', help: 'refuse anonymous reviews' },
  gzip: { schema: bool, default: 'false', help: 'gzip node lists for clients that accept it (for slow links; costs CPU on both ends)' },
  'cors-origin': { schema: text, default: '*', help: 'allowed CORS origins, comma-separated, or *' },
  'log-level': {
    schema: v.picklist(['debug', 'info', 'warn', 'error'], 'expected debug, info, warn or error'),
    default: 'info',
    help: 'least severe log level written',
  },
  'sync-from': {
    schema: httpUrl,
    default: undefined,
    help: 'keep this registry in step with an upstream (another registry-mirror, or the public registry)',
  },
  'sync-every': { schema: int(1, 525_600), default: '60', help: 'minutes between syncs with --sync-from' },
  'sync-archives': {
    schema: archiveMode,
    default: 'lazy',
    help: 'archives with --sync-from: none, eager (all at each sync) or lazy (each on its first download)',
  },
  ...UPSTREAM_SETTINGS,
} as const

/** Settings of the `sync` command; each shares its environment variable with the matching `serve --sync-*` setting. */
export const SYNC_SETTINGS = {
  from: {
    schema: httpUrl,
    default: undefined,
    env: 'sync-from',
    help: 'the upstream: another registry-mirror, or the public registry (required)',
  },
  archives: {
    schema: archiveMode,
    default: 'none',
    env: 'sync-archives',
    help: 'none, eager (--archives: every active archive now) or lazy (each on its first download)',
  },
  full: {
    schema: bool,
    default: 'false',
    env: 'sync-full',
    help: 'a full pass now: records what the upstream deleted, checks stored archives against it',
  },
  data: SETTINGS_BASE.data,
  concurrency: { ...UPSTREAM_SETTINGS['sync-concurrency'], env: 'sync-concurrency' },
  rate: { ...UPSTREAM_SETTINGS['sync-rate'], env: 'sync-rate' },
  timeout: { ...UPSTREAM_SETTINGS['sync-timeout'], env: 'sync-timeout' },
  retries: { ...UPSTREAM_SETTINGS['sync-retries'], env: 'sync-retries' },
  'full-every': { ...UPSTREAM_SETTINGS['sync-full-every'], env: 'sync-full-every' },
  'log-level': {
    schema: v.picklist(['debug', 'info', 'warn', 'error'], 'expected debug, info, warn or error'),
    default: 'error',
    help: 'least severe log level written (stderr)',
  },
} as const

export type SettingName = keyof typeof SETTINGS

interface Setting {
  schema: v.GenericSchema<string, unknown>
  default: string | undefined
  help: string
  /** The environment variable's name, when it is not the flag's. */
  env?: string
}
type Table = Record<string, Setting>
type Parsed<T extends Table, K extends keyof T> = v.InferOutput<T[K]['schema']>
export type ConfigOf<T extends Table> = {
  readonly [K in keyof T]: Parsed<T, K> | (undefined extends T[K]['default'] ? undefined : never)
}
export type Config = ConfigOf<typeof SETTINGS>
export type SyncConfig = ConfigOf<typeof SYNC_SETTINGS>

export const envName = (name: string) => `REGISTRY_MIRROR_${name.toUpperCase().replace(/-/g, '_')}`
export const settingEnv = (name: string, setting: object) => envName((setting as { env?: string }).env ?? name)

/** Flags win over the environment; returns the config or one line per problem. */
export function loadConfig<T extends Table = typeof SETTINGS>(
  input: { flags: Record<string, string | undefined>; env: Record<string, string | undefined> },
  table: T = SETTINGS as unknown as T,
): { config: ConfigOf<T>; problems: [] } | { config: undefined; problems: string[] } {
  const out: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [name, setting] of Object.entries(table)) {
    const fromFlag = input.flags[name]
    const raw = fromFlag ?? input.env[settingEnv(name, setting)] ?? setting.default
    if (raw === undefined) continue
    const result = v.safeParse(setting.schema, raw)
    if (result.success) out[name] = result.output
    else {
      const source = fromFlag !== undefined ? `--${name}` : settingEnv(name, setting)
      problems.push(`${source}: ${result.issues[0].message} (got "${raw}")`)
    }
  }
  if (problems.length) return { config: undefined, problems }
  return { config: Object.freeze(out) as ConfigOf<T>, problems: [] }
}
