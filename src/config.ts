/** Settings of `serve`: one table gives each its flag, environment variable, default, validation and help. */
import * as v from 'valibot'
import { DEFAULT_UNCLAIMED_PUBLISHER_ID } from './domain/ids'
import { withoutPassword, withoutUrlSecrets } from './domain/urls'
import { NODE_JSON_MAX_BYTES } from './services/node-json'
import { MAX_STORED_INT } from './domain/stored-int'

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
/**
 * Where this registry is reached: every address it hands out is this plus a path, so a query, a fragment or a
 * password would end up inside them (and a password in every page), and a path of `//host` would make the pages'
 * links lead to that host.
 */
const publicUrl = v.pipe(
  httpUrl,
  v.check((s) => {
    const url = new URL(s)
    return !/[?#]/.test(s) && !url.username && !url.password && !url.pathname.startsWith('//')
  }, 'expected http(s)://HOST[:PORT][/PATH], without a query, fragment, user or password'),
)
/**
 * An upstream to mirror: its address is shown in /ready, the pages, the logs and the sync's output and kept in the
 * store, so a user and password in it would be shown to anyone (registries are read without credentials). Paths are
 * added to it, so a query or fragment (a token, say) would end up inside them: no request of a sync could work.
 */
const upstreamUrl = v.pipe(
  httpUrl,
  v.check((s) => {
    const url = new URL(s)
    return !url.username && !url.password && !/[?#]/.test(s)
  }, 'expected http(s)://HOST[:PORT][/PATH] without a user, password, query or fragment (the address is shown in /ready, the pages and the logs)'),
)
const text = v.pipe(v.string(), v.trim(), v.minLength(1, 'expected a non-empty value'))
const postgresUrl = v.pipe(
  v.string(),
  v.regex(/^postgres(ql)?:\/\/[^/?#]+\/[^/?#]+/i, 'expected postgres://USER:PASSWORD@HOST:PORT/DATABASE'),
  v.check((s) => URL.canParse(s), 'expected postgres://USER:PASSWORD@HOST:PORT/DATABASE'),
)
const s3Url = v.pipe(
  v.string(),
  v.regex(/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[^?#]*)?$/, 'expected s3://BUCKET or s3://BUCKET/PREFIX (a valid bucket name)'),
)

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
  'sync-timeout': {
    schema: int(1, 3600),
    default: '30',
    help: 'seconds to wait for an upstream answer or each part of a body; a JSON reply ends within 4 times this, an archive comes at 16 KiB/s at least after it; a lazy first download waits this long for an answer, 4 times for all of it',
  },
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

/** Where the registry's data is: the settings of every command that opens it (serve, sync, export, import). */
const SETTINGS_BASE = {
  data: {
    schema: text,
    default: './data',
    help: 'directory of the store, archives and signing key (with --database and --storage: upload staging only)',
  },
  database: {
    schema: postgresUrl,
    default: undefined,
    secret: true,
    help: 'PostgreSQL database for several instances that serve one registry (postgres://USER:PASSWORD@HOST:PORT/DB); unset: SQLite in the data directory',
  },
  storage: {
    schema: s3Url,
    default: undefined,
    help: 'S3-compatible object storage for archives (s3://BUCKET/PREFIX); unset: the data directory',
  },
  'storage-cache-bytes': {
    schema: int(0, Number.MAX_SAFE_INTEGER),
    default: '1073741824',
    help: 'bytes of archives from object storage kept in the data directory, sent from there (with Content-Length and ranges); 0: every download streams from the bucket',
  },
  's3-endpoint': {
    schema: httpUrl,
    default: undefined,
    aliases: ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'],
    help: 'endpoint of the object storage (unset: AWS for the region)',
  },
  's3-region': {
    schema: text,
    // Given to the client always: unset, Bun's S3 client signs for "auto" at any endpoint that is not AWS's.
    default: 'us-east-1',
    aliases: ['AWS_REGION', 'AWS_DEFAULT_REGION'],
    help: 'region of the bucket, which requests are signed for',
  },
  's3-access-key-id': { schema: text, default: undefined, aliases: ['AWS_ACCESS_KEY_ID'], help: 'access key id for the object storage' },
  's3-secret-access-key': {
    schema: text,
    default: undefined,
    secret: true,
    aliases: ['AWS_SECRET_ACCESS_KEY'],
    help: 'secret access key for the object storage; prefer the environment (flags show in process listings)',
  },
  's3-session-token': {
    schema: text,
    default: undefined,
    secret: true,
    aliases: ['AWS_SESSION_TOKEN'],
    help: 'session token of temporary credentials',
  },
} as const

export const SETTINGS = {
  ...SETTINGS_BASE,
  'presigned-downloads': {
    schema: bool,
    default: 'false',
    help: 'answer archive downloads with a redirect to a presigned URL of the object storage, valid 5 minutes (needs --storage)',
  },
  host: { schema: text, default: '127.0.0.1', help: 'address to listen on' },
  port: { schema: int(0, 65535), default: '8080', help: 'port to listen on; 0 picks a free one' },
  'public-url': { schema: publicUrl, default: undefined, help: 'base of every absolute URL handed out (default http://HOST:PORT)' },
  'max-upload-bytes': { schema: int(1, Number.MAX_SAFE_INTEGER), default: '209715200', help: 'largest archive accepted' },
  'archive-time-budget': {
    schema: int(1, 3600),
    default: '10',
    help: 'seconds one archive check may take (it runs in a worker thread); an archive that needs longer is flagged',
  },
  'auto-approve': { schema: bool, default: 'true', help: 'make valid uploads active at once; false keeps them pending for an admin' },
  'max-publishers-per-user': { schema: int(1, 1_000_000), default: '5', help: 'publishers one user may belong to' },
  'repohost-api-url': {
    schema: httpUrl,
    default: 'https://api.github.com',
    help: 'GitHub-compatible API that claims check repository ownership with (GitHub Enterprise: https://HOST/api/v3; Gitea, Forgejo: https://HOST/api/v1)',
  },
  'repohost-timeout-ms': { schema: int(100, 600_000), default: '10000', help: 'how long a claim waits for the repository host' },
  'unclaimed-publisher-id': { schema: text, default: DEFAULT_UNCLAIMED_PUBLISHER_ID, help: 'publisher whose nodes may be claimed' },
  'require-review-auth': { schema: bool, default: 'false', help: 'refuse anonymous reviews' },
  gzip: { schema: bool, default: 'false', help: 'gzip node lists for clients that accept it (for slow links; costs CPU on both ends)' },
  'cors-origin': { schema: text, default: '*', help: 'allowed CORS origins, comma-separated, or *' },
  'video-provider-url': {
    schema: httpUrl,
    default: undefined,
    help: 'base URL of a Vidu-compatible video provider (e.g. https://api.vidu.com); unset, the video proxy answers 503',
  },
  'video-provider-key': {
    schema: text,
    default: undefined,
    secret: true,
    help: 'API key for the video provider; prefer --video-provider-key-file or the environment (flags show in process listings)',
  },
  'video-provider-key-file': { schema: text, default: undefined, help: 'file holding the API key for the video provider' },
  'video-public': { schema: bool, default: 'false', help: 'let callers without credentials use the video proxy and image staging' },
  'video-provider-timeout': { schema: int(1, 3600), default: '30', help: 'seconds to wait for the video provider before answering 504' },
  'video-start-limit': { schema: int(1, 1_000_000), default: '10', help: 'video tasks one caller may start per minute (429 past that)' },
  'video-max-image-bytes': {
    schema: int(1024, 100 * 1024 * 1024),
    default: '10485760',
    help: 'largest image accepted by image staging and in data: URIs sent to the video proxy',
  },
  fixture: {
    schema: text,
    default: undefined,
    help: 'load users, publishers, tokens, nodes, versions and archives from this JSON file before listening (without --data: into a fresh temporary data directory)',
  },
  'node-cache-bytes': {
    schema: int(0, Number.MAX_SAFE_INTEGER),
    default: String(NODE_JSON_MAX_BYTES),
    help: 'bytes of rendered nodes kept in memory between requests, oldest out (about 1.7 KB a node: the default keeps some 10,000, 170 MB keeps 100,000), and half as much again for the publishers they show; 0 keeps none',
  },
  'read-only': {
    schema: bool,
    default: 'false',
    help: 'refuse every write with 403 read_only; installs are served without counting downloads',
  },

  metrics: { schema: bool, default: 'true', help: 'serve GET /metrics (Prometheus text format; counts only, nothing sensitive)' },
  'log-level': {
    schema: v.picklist(['debug', 'info', 'warn', 'error'], 'expected debug, info, warn or error'),
    default: 'info',
    help: 'least severe log level written',
  },
  'sync-from': {
    schema: upstreamUrl,
    default: undefined,
    help: 'keep this registry in step with an upstream (another registry-mirror, or the public registry)',
  },
  'sync-every': { schema: int(1, 525_600), default: '60', help: 'minutes between syncs with --sync-from' },
  'sync-archives': {
    schema: archiveMode,
    default: 'eager',
    help: 'archives with --sync-from: eager (all at each sync: installable offline), lazy (each on its first download) or none',
  },
  ...UPSTREAM_SETTINGS,
} as const

/** Settings of the `sync` command; each shares its environment variable with the matching `serve --sync-*` setting. */
export const SYNC_SETTINGS = {
  from: {
    schema: upstreamUrl,
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
  ...SETTINGS_BASE,
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
  /** A credential: never shown in a problem line. */
  secret?: boolean
  /** Other environment variables that give it when its own is unset (AWS_REGION for --s3-region, ...). */
  aliases?: readonly string[]
}
type Table = Record<string, Setting>
type Parsed<T extends Table, K extends keyof T> = v.InferOutput<T[K]['schema']>
export type ConfigOf<T extends Table> = {
  readonly [K in keyof T]: Parsed<T, K> | (undefined extends T[K]['default'] ? undefined : never)
}
export type Config = ConfigOf<typeof SETTINGS>
export type SyncConfig = ConfigOf<typeof SYNC_SETTINGS>
/** Where the data is: the store, the archives, the staging directory. */
export type BackendConfig = ConfigOf<typeof SETTINGS_BASE>
export const BACKEND_SETTINGS = SETTINGS_BASE

export const envName = (name: string) => `REGISTRY_MIRROR_${name.toUpperCase().replace(/-/g, '_')}`
export const settingEnv = (name: string, setting: object) => envName((setting as { env?: string }).env ?? name)

/** Where a setting's value came from, as the problem lines name it. */
const sourceOf = (name: string, setting: object, flags: Record<string, string | undefined>) =>
  flags[name] !== undefined ? `--${name}` : settingEnv(name, setting)

/**
 * Flags win over the environment; returns the config or one line per problem. The provider key may come from a
 * file (`readFile`), so that it stays out of process listings; the config then holds the key itself.
 */
export function loadConfig<T extends Table = typeof SETTINGS>(
  input: { flags: Record<string, string | undefined>; env: Record<string, string | undefined>; readFile?: (path: string) => string },
  table: T = SETTINGS as unknown as T,
): { config: ConfigOf<T>; problems: [] } | { config: undefined; problems: string[] } {
  const out: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [name, setting] of Object.entries(table)) {
    // The usual variables of object storage clients (AWS_REGION, ...) count when ours are unset.
    const alias = setting.aliases?.map((n) => input.env[n]).find((x) => x !== undefined)
    const raw = input.flags[name] ?? input.env[settingEnv(name, setting)] ?? alias ?? setting.default
    if (raw === undefined) continue
    const result = v.safeParse(setting.schema, raw)
    if (result.success) out[name] = result.output
    else {
      // A start's problems reach service logs: an address's password is masked, an upstream's user and query go.
      const address = setting.schema === upstreamUrl ? withoutUrlSecrets(String(raw)) : withoutPassword(String(raw))
      const shown = 'secret' in setting ? '***' : address
      problems.push(`${sourceOf(name, setting, input.flags)}: ${result.issues[0].message} (got "${shown}")`)
    }
  }
  // Settings that depend on each other are checked once each parses, so that one mistake makes one line.
  if (!problems.length && table === (SETTINGS as unknown)) problems.push(...videoProviderProblems(out, input))
  if (!problems.length && out.database !== undefined && (out['max-upload-bytes'] as number) > MAX_STORED_INT) {
    const where = sourceOf('max-upload-bytes', SETTINGS['max-upload-bytes'], input.flags)
    problems.push(
      `${where}: at most ${MAX_STORED_INT} with --database (PostgreSQL keeps sizes as 32-bit integers) (got "${out['max-upload-bytes']}")`,
    )
  }
  if (!problems.length && out['presigned-downloads'] === true && out.storage === undefined) {
    const where = sourceOf('presigned-downloads', SETTINGS['presigned-downloads'], input.flags)
    problems.push(`${where}: presigned downloads need object storage (--storage s3://...)`)
  }
  if (problems.length) return { config: undefined, problems }
  return { config: Object.freeze(out) as ConfigOf<T>, problems: [] }
}

/** The provider needs its URL and exactly one source of its key; a key file is read here. */
function videoProviderProblems(out: Record<string, unknown>, input: Parameters<typeof loadConfig>[0]): string[] {
  const from = (name: keyof typeof SETTINGS) => sourceOf(name, SETTINGS[name], input.flags)
  const keyFile = out['video-provider-key-file'] as string | undefined
  if (keyFile !== undefined && out['video-provider-key'] !== undefined) {
    return [`${from('video-provider-key-file')}: give the provider key once, either as a value or as a file`]
  }
  if (keyFile !== undefined) {
    const where = from('video-provider-key-file')
    const read =
      input.readFile ??
      ((): string => {
        throw Object.assign(new Error('no file reader'), { code: 'ENOTSUP' })
      })
    let key: string
    try {
      key = read(keyFile).trim()
    } catch (err) {
      return [`${where}: cannot read ${keyFile} (${(err as NodeJS.ErrnoException).code ?? 'error'})`]
    }
    if (!key) return [`${where}: ${keyFile} is empty`]
    out['video-provider-key'] = key
  }
  const hasUrl = out['video-provider-url'] !== undefined
  const hasKey = out['video-provider-key'] !== undefined
  if (hasUrl && !hasKey) return [`${from('video-provider-url')}: the provider needs a key too (--video-provider-key-file)`]
  const keyFrom = from(keyFile !== undefined ? 'video-provider-key-file' : 'video-provider-key')
  if (hasKey && !hasUrl) return [`${keyFrom}: a provider key without --video-provider-url is unused`]
  return []
}
