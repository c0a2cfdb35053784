/** `users list`, `tokens list|revoke` and `--expires` on a data directory, as an operator runs them. */
import { afterEach, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { forTerminal } from '../../src/io'
import { tempDirs } from '../support/tmp'
import { runCommand } from '../support/cli'

const dirs = tempDirs('cli-credentials')
afterEach(dirs.cleanup)

const run = (...argv: string[]) => runCommand(argv)

describe('credential commands', () => {
  test('users list: a table, or JSON, with the count of working tokens', async () => {
    const data = dirs.make()
    await run('users', 'create', '--id', 'bob', '--email', 'bob@x.io', '--name', 'Bob Builder', '--admin', '--data', data)
    await run('users', 'create', '--id', 'alice', '--email', 'a@x.io', '--name', 'Alice', '--data', data)
    await run('tokens', 'create', '--user', 'alice', '--data', data)
    const table = await run('users', 'list', '--data', data)
    expect(table.code).toBe(0)
    expect(table.out[0]).toMatch(/^ID +NAME +EMAIL +ADMIN +STATUS +TOKENS +CREATED$/)
    expect(table.out.slice(1).map((l) => l.split(/ {2,}/).slice(0, 6))).toEqual([
      ['alice', 'Alice', 'a@x.io', 'no', 'active', '2'],
      ['bob', 'Bob Builder', 'bob@x.io', 'yes', 'active', '1'],
    ])
    const json = await run('users', 'list', '--json', '--data', data)
    expect(JSON.parse(json.out.join('\n'))).toEqual([
      expect.objectContaining({ id: 'alice', isAdmin: false, activeTokens: 2 }),
      expect.objectContaining({ id: 'bob', isAdmin: true, activeTokens: 1 }),
    ])
  })

  test('control characters reach the terminal escaped, and columns stay aligned', async () => {
    const data = dirs.make()
    await run('users', 'create', '--id', 'eve', '--email', 'e@x.io', '--name', 'Eve\u001b]0;owned\u0007\u009b2J', '--data', data)
    await run('users', 'create', '--id', 'zed', '--email', 'z@x.io', '--name', 'Zed', '--data', data)
    const table = await run('users', 'list', '--data', data)
    expect(table.out[1]).toStartWith('eve  Eve\\u001b]0;owned\\u0007\\u009b2J  e@x.io')
    expect(table.out[2]!.indexOf('z@x.io')).toBe(table.out[1]!.indexOf('e@x.io'))
    // forTerminal on JSON output keeps it JSON, meaning the same (that main.ts applies it: test/e2e/operators.test.ts).
    const json = forTerminal((await run('users', 'list', '--json', '--data', data)).out.join('\n'))
    expect(json).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(JSON.parse(json)[0].name).toBe('Eve\u001b]0;owned\u0007\u009b2J')
    expect(forTerminal('tab\tand\nnewline stay; \r and DEL\u007f do not')).toBe('tab\tand\nnewline stay; \\u000d and DEL\\u007f do not')
  })

  test('tokens list shows tokens masked; revoke by id; --expires sets the expiry; all recorded in the audit log', async () => {
    const data = dirs.make()
    const token = (await run('users', 'create', '--id', 'alice', '--email', 'a@x.io', '--name', 'Alice', '--expires', '30', '--data', data))
      .out[0]!
    const second = (await run('tokens', 'create', '--user', 'alice', '--data', data)).out[0]!
    const listed = JSON.parse((await run('tokens', 'list', '--user', 'alice', '--json', '--data', data)).out.join('\n')) as {
      id: string
      token: string
      createdAt: string
      expiresAt: string | null
      state: string
    }[]
    const first = listed.find((x) => x.token === `${token.slice(0, 4)}***`)!
    expect(Date.parse(first.expiresAt!) - Date.parse(first.createdAt)).toBe(30 * 24 * 60 * 60 * 1000)
    expect(listed.find((x) => x.token === `${second.slice(0, 4)}***`)).toMatchObject({ expiresAt: null, state: 'active' })

    const revoked = await run('tokens', 'revoke', first.id, '--data', data)
    expect(revoked).toEqual({ code: 0, out: [`revoked token ${first.id} of user alice`], err: [] })
    const again = await run('tokens', 'revoke', first.id, '--data', data)
    expect(again.out[0]).toStartWith(`token ${first.id} of user alice was already revoked at `)

    const table = await run('tokens', 'list', '--user', 'alice', '--data', data)
    expect(table.out[0]).toMatch(/^ID +TOKEN +CREATED +EXPIRES +LAST USED +STATE$/)
    const row = table.out.find((l) => l.startsWith(first.id))!.split(/ {2,}/)
    expect(row).toEqual([first.id, `${token.slice(0, 4)}***`, first.createdAt, first.expiresAt!, 'never', 'revoked'])
    for (const line of table.out) expect(line).not.toContain(token)

    const db = new Database(join(data, 'registry.db'))
    const audit = db.query<{ action: string; actor_address: string }, []>('select action, actor_address from audit_log order by id').all()
    expect(audit).toEqual([
      { action: 'user.create', actor_address: 'cli' },
      { action: 'access_token.create', actor_address: 'cli' },
      { action: 'access_token.create', actor_address: 'cli' },
      { action: 'access_token.revoke', actor_address: 'cli' },
    ])
    db.close()
  })

  test('bad usage exits 2 with a line saying why; unknown users and tokens exit 1', async () => {
    const data = dirs.make()
    await run('users', 'create', '--id', 'alice', '--email', 'a@x.io', '--name', 'Alice', '--data', data)
    for (const days of ['0', '-1', 'soon', '36501', '1.5']) {
      const bad = await run('tokens', 'create', '--user', 'alice', `--expires=${days}`, '--data', data)
      expect(bad).toEqual({ code: 2, out: [], err: [`--expires: expected a whole number of days from 1 to 36500 (got "${days}")`] })
    }
    expect((await run('tokens', 'revoke', '--data', data)).code).toBe(2)
    expect((await run('tokens', 'revoke', 'a', 'b', '--data', data)).code).toBe(2)
    expect((await run('tokens', 'list', '--data', data)).err).toEqual(['--user: required'])
    expect(await run('tokens', 'list', '--user', 'ghost', '--data', data)).toEqual({ code: 1, out: [], err: ['user "ghost" not found'] })
    expect(await run('tokens', 'revoke', 'nope', '--data', data)).toEqual({ code: 1, out: [], err: ['token "nope" not found'] })
    expect((await run('users', 'frobnicate', '--data', data)).code).toBe(2)
    // A value the registry refuses as typed is bad usage too; one it cannot act on (a user who exists) is not.
    const badId = await run('users', 'create', '--id', 'bad id!', '--email', 'b@x.io', '--name', 'B', '--data', data)
    expect(badId.code).toBe(2)
    expect(badId.err).toEqual([expect.stringContaining('user id must be')])
    // Nothing is made where --data points for a value refused as typed.
    const unmade = join(dirs.make(), 'registry')
    expect((await run('users', 'create', '--id', 'bad id!', '--email', 'b@x.io', '--name', 'B', '--data', unmade)).code).toBe(2)
    expect(existsSync(unmade)).toBe(false)
    expect(await run('users', 'create', '--id', 'alice', '--email', 'a@x.io', '--name', 'Alice', '--data', data)).toEqual({
      code: 1,
      out: [],
      err: ['user "alice" already exists'],
    })
    for (const argv of [
      ['users', 'list', '--help'],
      ['tokens', 'list', '--help'],
      ['tokens', 'revoke', '--help'],
    ]) {
      const help = await run(...argv)
      expect(help.code).toBe(0)
      expect(help.out.join('\n')).toContain('Usage:')
    }
  })

  test('a --database that is no PostgreSQL URL is refused like serve refuses it: no SQLite file of that name, no password shown', async () => {
    const cwd = dirs.make()
    const expected = '--database: expected postgres://USER:PASSWORD@HOST:PORT/DATABASE (got "***")'
    for (const url of ['mysql://u:s3cret@db/x', 'u:s3cret@db']) {
      for (const argv of [
        ['users', 'create', '--id', 'a', '--email', 'a@x.io', '--name', 'A', '--database', url],
        ['users', 'list', '--database', url],
        ['tokens', 'list', '--user', 'a', '--database', url],
        ['audit', '--database', url],
      ]) {
        const shown = await runIn(cwd, ...argv)
        expect({ argv, ...shown }).toEqual({ argv, code: 2, out: [], err: [expected] })
      }
    }
    expect(readdirSync(cwd)).toEqual([])
  })
})

/** `run` with the working directory elsewhere: where a path taken for an SQLite file would be made. */
async function runIn(cwd: string, ...argv: string[]) {
  const before = process.cwd()
  process.chdir(cwd)
  try {
    return await run(...argv)
  } finally {
    process.chdir(before)
  }
}
