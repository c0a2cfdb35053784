import { afterEach, describe, expect, test } from 'bun:test'
import { lstatSync, readdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../../src/cli'
import { joinNegativeValues } from '../../src/cli-args'
import { fixtureJsonSchema } from '../../src/domain/fixture'
import { tempDirs } from '../support/tmp'
import { capturedIo } from '../support/cli'

const EXAMPLE = new URL('../fixtures/example-fixture.json', import.meta.url).pathname

/** An io whose stop signal fires as soon as the server says it listens. */
function stopWhenListening(env: Record<string, string> = {}) {
  const out: string[] = []
  const err: string[] = []
  let stop: (signal: string) => void = () => {}
  const stopSignal = new Promise<string>((resolve) => (stop = resolve))
  const cli = {
    out: (l: string) => (out.push(l), l.startsWith('listening on ') && stop('SIGTERM')),
    err: (l: string) => err.push(l),
    env,
    stopSignal,
  }
  return { out, err, io: cli }
}

const io = capturedIo

const dirs = tempDirs('cli')
const tmp = dirs.make
afterEach(dirs.cleanup)

describe('joinNegativeValues', () => {
  const options = { size: { type: 'string' }, dry: { type: 'boolean' } } as const
  test.each([
    [['--size', '-5'], ['--size=-5']],
    [
      ['--size', '-0.5', '--dry'],
      ['--size=-0.5', '--dry'],
    ],
    [['--size=-5'], ['--size=-5']],
    [
      ['--dry', '-5'],
      ['--dry', '-5'],
    ],
    [
      ['--size', '-x'],
      ['--size', '-x'],
    ],
    [
      ['--other', '-5'],
      ['--other', '-5'],
    ],
    [['--size'], ['--size']],
    [
      ['--', '--size', '-5'],
      ['--', '--size', '-5'],
    ],
  ])('%p -> %p', (argv, expected) => {
    expect(joinNegativeValues(argv, options)).toEqual(expected)
  })
})

describe('runCli', () => {
  test('--video-public is a switch', async () => {
    const { io: cli, err } = io()
    expect(await runCli(['serve', '--video-public', '--video-provider-timeout', 'x'], cli)).toBe(2)
    expect(err).toEqual(['--video-provider-timeout: expected a whole number from 1 to 3600 (got "x")'])
  })

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
    const topic = io()
    expect(await runCli(['help', 'frobnicate'], topic.io)).toBe(2)
    expect(topic.err[0]).toBe('no help on "frobnicate": it is not a command')
    expect(topic.out).toEqual([])
    for (const inherited of ['constructor', '__proto__', 'toString']) {
      const odd = io()
      expect(await runCli(['help', inherited], odd.io)).toBe(2)
      expect(odd.err[0]).toBe(`no help on "${inherited}": it is not a command`)
    }
    const version = io()
    expect(await runCli(['help', 'version'], version.io)).toBe(0)
    expect(version.out[0]).toStartWith('Usage: registry-mirror version')
    // A value that starts with "-" and is no number: Node's whole explanation, which says how to give one.
    const dash = io()
    expect(await runCli(['users', 'create', '--id', 'a', '--email', 'a@x', '--name', '-A', '--data', tmp()], dash.io)).toBe(2)
    expect(dash.err).toEqual([
      "Option '--name' argument is ambiguous.",
      "Did you forget to specify the option argument for '--name'?",
      "To specify an option argument starting with a dash use '--name=-XYZ'.",
    ])
  })

  test('a negative number after an option is its value: every problem still gets its own line, exit 2', async () => {
    for (const size of [['--max-upload-bytes', '-5'], ['--max-upload-bytes=-5']]) {
      const { io: cli, err, out } = io()
      expect(await runCli(['serve', '--port', '99999', ...size, '--public-url', 'ftp://x'], cli)).toBe(2)
      expect(out).toEqual([])
      expect(err).toEqual([
        '--port: expected a whole number from 0 to 65535 (got "99999")',
        '--public-url: expected an absolute http(s) URL (got "ftp://x")',
        '--max-upload-bytes: expected a whole number from 1 to 9007199254740991 (got "-5")',
      ])
    }
    const days = io()
    const create = ['users', 'create', '--id', 'a', '--email', 'a@x', '--name', 'A', '--expires', '-3', '--data', tmp()]
    expect(await runCli(create, days.io)).toBe(2)
    expect(days.err).toEqual(['--expires: expected a whole number of days from 1 to 36500 (got "-3")'])
    const since = io()
    for (const bad of ['-1', '1e3', '0x10', ''])
      expect(await runCli(['export', '--since', bad, '--data', tmp(), 'out.bundle'], since.io)).toBe(2)
    expect(since.err).toEqual(['-1', '1e3', '0x10', ''].map((bad) => `--since: expected a serial, a whole number (got "${bad}")`))
    const concurrency = io()
    expect(await runCli(['sync', '--from', 'http://127.0.0.1:9', '--concurrency', '-3', '--data', tmp()], concurrency.io)).toBe(2)
    expect(concurrency.err).toEqual(['--concurrency: expected a whole number from 1 to 64 (got "-3")'])
    // A switch takes no value: a number after one is an argument of its own, refused as before.
    const flag = io()
    expect(await runCli(['serve', '--read-only', '-5'], flag.io)).toBe(2)
    expect(flag.err.join(' ')).toContain("'-5'")
  })

  test('export refuses a FILE that is there but is no regular file: renaming the bundle onto it would replace a device or link', async () => {
    const dir = tmp()
    const data = join(dir, 'data')
    expect(await runCli(['users', 'create', '--id', 'a', '--email', 'a@x', '--name', 'A', '--data', data], io().io)).toBe(0)
    const link = join(dir, 'out.tar')
    symlinkSync('/dev/null', link)
    const run = io()
    expect(await runCli(['export', '--data', data, link], run.io)).toBe(1)
    expect(run.err).toEqual([`cannot write ${link}: it is not a regular file (the bundle is written beside it and renamed onto it)`])
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(readdirSync(dir).sort()).toEqual(['data', 'out.tar'])
  })

  test('version and --version print the version', async () => {
    for (const argv of [['version'], ['--version']]) {
      const v = io()
      expect(await runCli(argv, v.io)).toBe(0)
      expect(v.out).toEqual([`registry-mirror ${(await Bun.file(new URL('../../package.json', import.meta.url)).json()).version}`])
    }
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
    // As long as a fixture's: a name of 200 characters and an email of 320, not one more.
    const long = (id: string, name: number, email: number) =>
      runCli(
        ['users', 'create', '--id', id, '--email', `${'e'.repeat(email - 4)}@x.i`, '--name', 'n'.repeat(name), '--data', data],
        io().io,
      )
    expect(await long('max', 200, 320)).toBe(0)
    const longName = io()
    expect(
      await runCli(['users', 'create', '--id', 'n', '--email', 'n@x.io', '--name', 'n'.repeat(201), '--data', data], longName.io),
    ).toBe(2) // a value refused as typed: bad usage
    expect(longName.err).toEqual(['name must be at most 200 characters'])
    expect(await long('e', 10, 321)).toBe(2)
    const listed = io()
    await runCli(['users', 'list', '--json', '--data', data], listed.io)
    expect((JSON.parse(listed.out.join('\n')) as { id: string }[]).map((u) => u.id)).toEqual(['alice', 'max'])
  })

  test('fixture --schema prints the JSON Schema of fixture files', async () => {
    const { io: cli, out } = io()
    expect(await runCli(['fixture', '--schema'], cli)).toBe(0)
    expect(JSON.parse(out.join('\n'))).toEqual(fixtureJsonSchema())
    expect(await runCli(['fixture'], io().io)).toBe(2)
  })

  test('serve --fixture with a bad file exits 2 with one line per problem, each naming the file', async () => {
    const file = `${tmp()}/bad.json`
    await Bun.write(file, JSON.stringify({ users: [{ id: 'a b' }], nodes: [{ id: 'x' }] }))
    const { io: cli, err, out } = stopWhenListening()
    expect(await runCli(['serve', '--port', '0', '--fixture', file, '--log-level', 'error'], cli)).toBe(2)
    expect(err).toEqual([
      `${file}: users[0].id: must be 1-128 letters, digits, ".", "_", "@" or "-"`,
      `${file}: nodes[0].publisher: is required`,
    ])
    expect(out).toEqual([])
    const missing = stopWhenListening()
    expect(await runCli(['serve', '--port', '0', '--fixture', `${file}.gone`, '--log-level', 'error'], missing.io)).toBe(2)
    expect(missing.err).toEqual([`${file}.gone: cannot read the fixture: no such file`])
  })

  test('serve --fixture --data keeps the data, and serving the same fixture again on it changes nothing', async () => {
    const data = tmp()
    const args = ['serve', '--port', '0', '--fixture', EXAMPLE, '--data', data, '--log-level', 'error']
    expect(await runCli(args, stopWhenListening().io)).toBe(0)
    const { openStore } = await import('../../src/store/db')
    const serial = async () => {
      const db = await openStore(`${data}/registry.db`)
      const row = await db.selectFrom('registry_instance').select('last_serial').executeTakeFirstOrThrow()
      const nodes = await db.selectFrom('nodes').select('id').orderBy('id').execute()
      await db.destroy()
      return { serial: row.last_serial, nodes: nodes.map((n) => n.id) }
    }
    const first = await serial()
    expect(first.nodes).toEqual(['blur-pack', 'old-pack', 'upscale-tools'])
    expect(await runCli(args, stopWhenListening({ REGISTRY_MIRROR_READ_ONLY: 'true' }).io)).toBe(0)
    expect(await serial()).toEqual(first)
  })
})

describe('users promote|demote|ban|unban and audit', () => {
  test('each change prints the account as it now is, is audited as done from the command line, and is a no-op when already so', async () => {
    const data = tmp()
    const run = async (...argv: string[]) => {
      const r = io()
      const code = await runCli([...argv, '--data', data], r.io)
      return { code, out: r.out, err: r.err }
    }
    await run('users', 'create', '--id', 'alice', '--email', 'a@x.io', '--name', 'Alice')
    expect(await run('users', 'promote', '--id', 'alice')).toEqual({ code: 0, out: ['alice: admin, active'], err: [] })
    expect((await run('users', 'promote', '--id', 'alice')).out).toEqual(['alice: admin, active'])
    expect((await run('users', 'ban', '--id', 'alice')).out).toEqual(['alice: admin, banned'])
    expect((await run('users', 'unban', '--id', 'alice')).out).toEqual(['alice: admin, active'])
    expect((await run('users', 'demote', '--id', 'alice')).out).toEqual(['alice: not admin, active'])
    expect(await run('users', 'ban', '--id', 'ghost')).toEqual({ code: 1, out: [], err: ['user "ghost" not found'] })
    expect((await run('users', 'ban')).code).toBe(2)

    const json = await run('audit', '--json')
    expect(json.code).toBe(0)
    const entries = json.out.map((line) => JSON.parse(line))
    expect(entries.map((e) => e.action)).toEqual([
      'user.demote',
      'user.unban',
      'user.ban',
      'user.promote',
      'access_token.create',
      'user.create',
    ])
    expect(entries[0]).toMatchObject({
      actor_id: null,
      actor_address: 'cli',
      target_kind: 'user',
      target_id: 'alice',
      before: { admin: true, status: 'active' },
      after: { admin: false, status: 'active' },
    })
    const text = await run('audit', '--limit', '1')
    expect(text.out).toHaveLength(1)
    expect(text.out[0]).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z  -@cli  user\.demote  user:alice  \{"admin":true,"status":"active"\} -> \{"admin":false,"status":"active"\}$/,
    )
    expect((await run('audit', '--since', '2999-01-01')).out).toEqual([])
    for (const since of ['soon', '0', '1 May 2026', '2026-02-30', '2026-01-02T25:00'])
      expect((await run('audit', '--since', since)).code).toBe(2)
    expect((await run('audit', '--since', '2026-01-02')).code).toBe(0)
    for (const limit of ['1e2', '0x10', '', '2.0']) expect((await run('audit', '--limit', limit)).code).toBe(2)
    expect((await run('audit', '--limit', '0')).code).toBe(2)
  })

  test('help for users and audit', async () => {
    for (const argv of [
      ['users', 'promote', '--help'],
      ['audit', '--help'],
      ['help', 'audit'],
    ]) {
      const h = io()
      expect(await runCli(argv, h.io)).toBe(0)
      expect(h.out.join('\n')).toContain('Usage:')
    }
  })
})
