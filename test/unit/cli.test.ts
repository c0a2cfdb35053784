import { afterEach, describe, expect, test } from 'bun:test'
import { runCli } from '../../src/cli'
import { loadConfig } from '../../src/config'
import { tempDirs } from '../support/tmp'

function io(env: Record<string, string> = {}) {
  const out: string[] = []
  const err: string[] = []
  return {
    out,
    err,
    io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), env, stopSignal: new Promise<string>(() => {}) },
  }
}

const dirs = tempDirs('cli')
const tmp = dirs.make
afterEach(dirs.cleanup)

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

  test('public URL loses its trailing slash', () => {
    expect(loadConfig({ flags: { 'public-url': 'https://r.example/base/' }, env: {} }).config!['public-url']).toBe('https://r.example/base')
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

  test('--video-public is a switch', async () => {
    const { io: cli, err } = io()
    expect(await runCli(['serve', '--video-public', '--video-provider-timeout', 'x'], cli)).toBe(2)
    expect(err).toEqual(['--video-provider-timeout: expected a whole number from 1 to 3600 (got "x")'])
  })
})

describe('runCli', () => {
  test('bad settings exit 2 with one line each', async () => {
    const { io: cli, err } = io()
    expect(await runCli(['serve', '--port', 'abc', '--auto-approve=maybe'], cli)).toBe(2)
    expect(err).toHaveLength(2)
    expect(err[0]).toStartWith('--port:')
    expect(err[1]).toStartWith('--auto-approve:')
  })

  test('unknown options and commands exit 2', async () => {
    const a = io()
    expect(await runCli(['serve', '--bogus'], a.io)).toBe(2)
    expect(a.err[0]).toContain('--bogus')
    const b = io()
    expect(await runCli(['frobnicate'], b.io)).toBe(2)
  })

  test('--help for each command exits 0', async () => {
    for (const argv of [
      ['--help'],
      ['serve', '--help'],
      ['users', 'create', '--help'],
      ['tokens', 'create', '--help'],
      ['help', 'serve'],
    ]) {
      const h = io()
      expect(await runCli(argv, h.io)).toBe(0)
      expect(h.out.join('\n')).toContain('Usage:')
    }
    const s = io()
    await runCli(['serve', '--help'], s.io)
    expect(s.out[0]).toContain('REGISTRY_MIRROR_PUBLIC_URL')
  })

  test('users create prints one token line; tokens create another; errors exit non-zero', async () => {
    const data = tmp()
    const a = io()
    expect(await runCli(['users', 'create', '--id', 'alice', '--email', 'a@x.io', '--name', 'Alice', '--data', data], a.io)).toBe(0)
    expect(a.out).toHaveLength(1)
    expect(a.out[0]).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const b = io({ REGISTRY_MIRROR_DATA: data })
    expect(await runCli(['tokens', 'create', '--user', 'alice'], b.io)).toBe(0)
    expect(b.out[0]).not.toBe(a.out[0])
    const dup = io()
    expect(await runCli(['users', 'create', '--id', 'alice', '--email', 'a@x.io', '--name', 'A', '--data', data], dup.io)).toBe(1)
    expect(dup.err[0]).toBe('user "alice" already exists')
    const missing = io()
    expect(await runCli(['users', 'create', '--id', 'bob', '--data', data], missing.io)).toBe(2)
    expect(missing.err).toEqual(['--email: required', '--name: required'])
    const ghost = io()
    expect(await runCli(['tokens', 'create', '--user', 'ghost', '--data', data], ghost.io)).toBe(1)
  })
})
