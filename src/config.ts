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

export const SETTINGS = {
  data: { schema: text, default: './data', help: 'directory of the store, archives and signing key' },
  host: { schema: text, default: '127.0.0.1', help: 'address to listen on' },
  port: { schema: int(0, 65535), default: '8080', help: 'port to listen on; 0 picks a free one' },
  'public-url': { schema: httpUrl, default: undefined, help: 'base of every absolute URL handed out (default http://HOST:PORT)' },
  'max-upload-bytes': { schema: int(1, Number.MAX_SAFE_INTEGER), default: '209715200', help: 'largest archive accepted' },
  'auto-approve': { schema: bool, default: 'true', help: 'make valid uploads active at once; false keeps them pending for an admin' },
  'max-publishers-per-user': { schema: int(1, 1_000_000), default: '5', help: 'publishers one user may belong to' },
  'require-review-auth': { schema: bool, default: 'false', help: 'refuse anonymous reviews' },
  gzip: { schema: bool, default: 'false', help: 'gzip node lists for clients that accept it (for slow links; costs CPU on both ends)' },
  'cors-origin': { schema: text, default: '*', help: 'allowed CORS origins, comma-separated, or *' },
  metrics: { schema: bool, default: 'true', help: 'serve GET /metrics (Prometheus text format; counts only, nothing sensitive)' },
  'log-level': {
    schema: v.picklist(['debug', 'info', 'warn', 'error'], 'expected debug, info, warn or error'),
    default: 'info',
    help: 'least severe log level written',
  },
} as const

export type SettingName = keyof typeof SETTINGS
type Parsed<K extends SettingName> = v.InferOutput<(typeof SETTINGS)[K]['schema']>
export type Config = { readonly [K in SettingName]: Parsed<K> | (undefined extends (typeof SETTINGS)[K]['default'] ? undefined : never) }

export const envName = (name: string) => `REGISTRY_MIRROR_${name.toUpperCase().replace(/-/g, '_')}`

/** Flags win over the environment; returns the config or one line per problem. */
export function loadConfig(input: {
  flags: Record<string, string | undefined>
  env: Record<string, string | undefined>
}): { config: Config; problems: [] } | { config: undefined; problems: string[] } {
  const out: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const fromFlag = input.flags[name]
    const raw = fromFlag ?? input.env[envName(name)] ?? setting.default
    if (raw === undefined) continue
    const result = v.safeParse(setting.schema as v.GenericSchema<string, unknown>, raw)
    if (result.success) out[name] = result.output
    else {
      const source = fromFlag !== undefined ? `--${name}` : envName(name)
      problems.push(`${source}: ${result.issues[0].message} (got "${raw}")`)
    }
  }
  if (problems.length) return { config: undefined, problems }
  return { config: Object.freeze(out) as Config, problems: [] }
}
