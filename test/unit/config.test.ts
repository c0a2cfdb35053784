/** The settings table: defaults, environment and flags, one line per problem, backends and the video provider. */
import { describe, expect, test } from 'bun:test'
import { loadConfig, SYNC_SETTINGS } from '../../src/config'

describe('loadConfig', () => {
  test('defaults, environment, and flags over environment', () => {
    const { config } = loadConfig({ flags: { port: '9000' }, env: { REGISTRY_MIRROR_PORT: '7000', REGISTRY_MIRROR_AUTO_APPROVE: 'false' } })
    expect(config).toMatchObject({ data: './data', host: '127.0.0.1', port: 9000, 'auto-approve': false, 'max-upload-bytes': 209715200 })
    expect(config!['public-url']).toBeUndefined()
  })

  test('one line per problem, naming where the value came from', () => {
    const { problems } = loadConfig({
      flags: { port: '70000', 'public-url': 'ftp://x' },
      env: { REGISTRY_MIRROR_MAX_UPLOAD_BYTES: 'lots' },
    })
    expect(problems).toEqual([
      '--port: expected a whole number from 0 to 65535 (got "70000")',
      '--public-url: expected an absolute http(s) URL (got "ftp://x")',
      'REGISTRY_MIRROR_MAX_UPLOAD_BYTES: expected a whole number from 1 to 9007199254740991 (got "lots")',
    ])
  })

  test('--fixture and --read-only, as flags or environment variables', () => {
    const defaults = loadConfig({ flags: {}, env: {} }).config!
    expect(defaults.fixture).toBeUndefined()
    expect(defaults['read-only']).toBe(false)
    const env = { REGISTRY_MIRROR_FIXTURE: 'ci.json', REGISTRY_MIRROR_READ_ONLY: 'true' }
    expect(loadConfig({ flags: {}, env }).config).toMatchObject({ fixture: 'ci.json', 'read-only': true })
    expect(loadConfig({ flags: { 'read-only': 'maybe' }, env: {} }).problems).toEqual(['--read-only: expected true or false (got "maybe")'])
  })

  test('backends: PostgreSQL and S3 settings, the usual AWS_* variables under ours, one line per mistake', () => {
    const env = {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIA',
      AWS_SECRET_ACCESS_KEY: 'shh',
      REGISTRY_MIRROR_S3_REGION: 'eu-central-1',
    }
    const flags = { database: 'postgres://u:p@db:5432/registry', storage: 's3://archives/prod', 'presigned-downloads': 'true' }
    expect(loadConfig({ flags, env }).config).toMatchObject({
      ...flags,
      'presigned-downloads': true,
      's3-region': 'eu-central-1',
      's3-access-key-id': 'AKIA',
      's3-secret-access-key': 'shh',
      'storage-cache-bytes': 1073741824,
    })
    expect(
      loadConfig({ flags: { database: 'mysql://u:secret@db/x', storage: 's3://Bad_Bucket', 'presigned-downloads': 'true' }, env: {} })
        .problems,
    ).toEqual([
      '--database: expected postgres://USER:PASSWORD@HOST:PORT/DATABASE (got "***")',
      '--storage: expected s3://BUCKET or s3://BUCKET/PREFIX (a valid bucket name) (got "s3://Bad_Bucket")',
    ])
    expect(loadConfig({ flags: { 'presigned-downloads': 'true' }, env: {} }).problems).toEqual([
      '--presigned-downloads: presigned downloads need object storage (--storage s3://...)',
    ])
    // An archive's size is a 32-bit INTEGER on PostgreSQL: a larger one would be received, checked and sent to the bucket, then fail.
    const database = 'postgres://u@127.0.0.1/db'
    expect(loadConfig({ flags: { database, 'max-upload-bytes': '2147483648' }, env: {} }).problems).toEqual([
      '--max-upload-bytes: at most 2147483647 with --database (PostgreSQL keeps sizes as 32-bit integers) (got "2147483648")',
    ])
    expect(loadConfig({ flags: { database, 'max-upload-bytes': '2147483647' }, env: {} }).problems).toEqual([])
    expect(loadConfig({ flags: { 'max-upload-bytes': '4294967296' }, env: {} }).problems).toEqual([])
  })

  test('public URL loses its trailing slash; one that would spoil the addresses made from it is refused', () => {
    expect(loadConfig({ flags: { 'public-url': 'https://r.example/base/' }, env: {} }).config!['public-url']).toBe('https://r.example/base')
    // Every address handed out is it plus a path: a query, fragment, password or `//host` path would be inside them.
    const refused = [
      'https://u:pw@r.example/base',
      'https://r.example/base?x=1',
      'https://r.example/base#f',
      'https://r.example//evil.example',
    ]
    expect(refused.map((url) => loadConfig({ flags: { 'public-url': url }, env: {} }).problems)).toEqual(
      ['https://u:***@r.example/base', ...refused.slice(1)].map((shown) => [
        `--public-url: expected http(s)://HOST[:PORT][/PATH], without a query, fragment, user or password (got "${shown}")`,
      ]),
    )
  })
})

describe('upstream settings', () => {
  test('an upstream address with a user or password is refused, not shown, for serve and sync: it is shown to anyone', () => {
    const wanted = '(the address is shown in /ready, the pages and the logs) (got "http://127.0.0.1:9/m")'
    const expected = 'expected http(s)://HOST[:PORT][/PATH] without a user, password, query or fragment'
    const serve = loadConfig({ flags: { 'sync-from': 'http://admin:S3CRET@127.0.0.1:9/m' }, env: {} }).problems
    expect(serve).toEqual([`--sync-from: ${expected} ${wanted}`])
    const sync = loadConfig({ flags: { from: 'http://admin:S3CRET@127.0.0.1:9/m' }, env: {} }, SYNC_SETTINGS).problems
    expect(sync).toEqual([`--from: ${expected} ${wanted}`])
    expect(loadConfig({ flags: { 'sync-from': 'http://127.0.0.1:9/m' }, env: {} }).config!['sync-from']).toBe('http://127.0.0.1:9/m')
  })

  test('an address that does not parse keeps its password masked too', () => {
    const cases: [flag: string, raw: string, shown: string][] = [
      ['s3-endpoint', 'http://key:S3CRET@bad host', 'http://key:***@bad host'],
      ['sync-from', 'http://admin:S3C@RET@bad host/m', 'http://bad host/m'], // an upstream's: no user either
      ['repohost-api-url', 'https://user:S3CRET@[bad', 'https://user:***@[bad'],
    ]
    for (const [flag, raw, shown] of cases) {
      const problems = loadConfig({ flags: { [flag]: raw }, env: {} }).problems
      expect(problems).toHaveLength(1)
      expect(problems[0]).not.toContain('S3C')
      expect(problems[0]).toEndWith(`(got "${shown}")`)
    }
  })
})

describe('video provider settings', () => {
  const files: Record<string, string> = { '/run/secrets/vidu': '  vk-from-file\n', '/run/secrets/empty': '\n' }
  const readFile = (path: string) => {
    if (path in files) return files[path]!
    throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' })
  }
  const load = (flags: Record<string, string>, env: Record<string, string> = {}) => loadConfig({ flags, env, readFile })

  test('defaults: no provider, closed, 30 s, 10 starts a minute, 10 MiB images', () => {
    const { config } = load({})
    expect(config).toMatchObject({
      'video-public': false,
      'video-provider-timeout': 30,
      'video-start-limit': 10,
      'video-max-image-bytes': 10485760,
    })
    expect(config!['video-provider-url']).toBeUndefined()
    expect(config!['video-provider-key']).toBeUndefined()
  })

  test('the key from a file (trimmed) or from the environment', () => {
    const url = 'https://api.vidu.example/'
    const fromFile = load({ 'video-provider-url': url, 'video-provider-key-file': '/run/secrets/vidu' }).config!
    expect(fromFile['video-provider-key']).toBe('vk-from-file')
    expect(fromFile['video-provider-url']).toBe('https://api.vidu.example')
    const fromEnv = load({}, { REGISTRY_MIRROR_VIDEO_PROVIDER_URL: url, REGISTRY_MIRROR_VIDEO_PROVIDER_KEY: 'vk-env' }).config!
    expect(fromEnv['video-provider-key']).toBe('vk-env')
  })

  test('one line per problem; a bad key value is never echoed', () => {
    const url = { 'video-provider-url': 'https://v.example' }
    expect(load(url).problems).toEqual(['--video-provider-url: the provider needs a key too (--video-provider-key-file)'])
    expect(load({ 'video-provider-key': 'vk' }).problems).toEqual([
      '--video-provider-key: a provider key without --video-provider-url is unused',
    ])
    expect(load({ ...url, 'video-provider-key': 'vk', 'video-provider-key-file': '/run/secrets/vidu' }).problems).toEqual([
      '--video-provider-key-file: give the provider key once, either as a value or as a file',
    ])
    expect(load({ ...url, 'video-provider-key-file': '/nope' }).problems).toEqual(['--video-provider-key-file: cannot read /nope (ENOENT)'])
    expect(load({ ...url, 'video-provider-key-file': '/run/secrets/empty' }).problems).toEqual([
      '--video-provider-key-file: /run/secrets/empty is empty',
    ])
    expect(load({ ...url }, { REGISTRY_MIRROR_VIDEO_PROVIDER_KEY: '   ' }).problems).toEqual([
      'REGISTRY_MIRROR_VIDEO_PROVIDER_KEY: expected a non-empty value (got "***")',
    ])
    expect(load({ 'video-provider-timeout': '0', 'video-start-limit': 'many' }).problems).toEqual([
      '--video-provider-timeout: expected a whole number from 1 to 3600 (got "0")',
      '--video-start-limit: expected a whole number from 1 to 1000000 (got "many")',
    ])
  })
})
