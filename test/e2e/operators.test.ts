/** The compiled binary as an operator runs it: token commands against a running server, metrics, request ids. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { backendEnv } from '../support/backends'
import { BIN, cli as runCli, ensureBinary, startServer, type Server } from '../support/binary'
import { parseScrape, series } from '../support/metrics'

const data = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-operators-'))
const cli = (...args: string[]) => runCli(data, ...args)
let server: Server

beforeAll(async () => {
  await ensureBinary()
  server = await startServer(data)
})
afterAll(async () => {
  await server.stop()
  rmSync(data, { recursive: true, force: true })
})

const me = (token: string) => fetch(`${server.url}/users`, { headers: { authorization: `Bearer ${token}` } })

describe('token commands against a running server', () => {
  test('create, list, revoke: the revoked token gets 401 on its next request, the other keeps working', async () => {
    const created = cli('users', 'create', '--id', 'alice', '--email', 'alice@example.com', '--name', 'Alice')
    expect(created.code).toBe(0)
    const token = created.out
    const spare = cli('tokens', 'create', '--user', 'alice', '--expires', '7')
    expect(spare.code).toBe(0)
    expect((await me(token)).status).toBe(200)
    expect((await me(spare.out)).status).toBe(200)

    const listed = cli('tokens', 'list', '--user', 'alice', '--json')
    expect(listed.code).toBe(0)
    const tokens = JSON.parse(listed.out) as { id: string; token: string; expiresAt: string | null; lastUsedAt: string | null }[]
    expect(listed.out).not.toContain(token)
    const mine = tokens.find((x) => x.token === `${token.slice(0, 4)}***`)!
    expect(mine).toMatchObject({ expiresAt: null, lastUsedAt: expect.any(String) })
    expect(tokens.find((x) => x.token === `${spare.out.slice(0, 4)}***`)!.expiresAt).toEqual(expect.any(String))

    const revoked = cli('tokens', 'revoke', mine.id)
    expect(revoked).toMatchObject({ code: 0, out: `revoked token ${mine.id} of user alice` })
    const refused = await me(token)
    expect(refused.status).toBe(401)
    expect(await refused.json()).toEqual({ error: 'unauthorized', message: 'auth token revoked' })
    expect((await me(spare.out)).status).toBe(200)

    const users = cli('users', 'list')
    expect(users.code).toBe(0)
    expect(users.out.split('\n')[1]!.split(/ {2,}/).slice(0, 6)).toEqual(['alice', 'Alice', 'alice@example.com', 'no', 'active', '1'])
  })
})

describe('operations', () => {
  test('GET /metrics counts the requests served; every response has a request id', async () => {
    const res = await fetch(`${server.url}/nodes/missing-node`, { headers: { 'x-request-id': 'e2e-1' } })
    expect(res.status).toBe(404)
    expect(res.headers.get('x-request-id')).toBe('e2e-1')
    const scrape = await fetch(`${server.url}/metrics`)
    expect(scrape.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const s = parseScrape(await scrape.text())
    expect(series(s, 'registry_mirror_http_requests_total', { method: 'GET', route: '/nodes/:nodeId', status: '404' })).toBe(1)
    expect(series(s, 'registry_mirror_http_requests_total', { method: 'GET', route: '/users', status: '401' })).toBe(1)
    expect(series(s, 'process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024)
    // A running server samples its event loop every 100 ms; the commands above took longer than that.
    expect(series(s, 'registry_mirror_event_loop_delay_seconds_count')).toBeGreaterThan(0)
  })
})

describe('command output', () => {
  test('escapes control characters on stdout and stderr: data from elsewhere cannot drive the terminal', () => {
    expect(cli('users', 'create', '--id', 'mallory', '--email', 'm@x.io', '--name', 'M\u001b[2J\u009b31m').code).toBe(0)
    const listed = cli('users', 'list')
    expect(listed.out).toContain('M\\u001b[2J\\u009b31m')
    expect(listed.out).not.toMatch(/[\u001b\u009b]/)
    const help = Bun.spawnSync([BIN, 'help', '\u001b]0;title\u0007'])
    expect({ code: help.exitCode, err: help.stderr.toString().split('\n')[0] }).toEqual({
      code: 2,
      err: 'no help on "\\u001b]0;title\\u0007": it is not a command',
    })
  })

  /** A data directory whose `users list --json` prints some 300 KB, several times what a pipe holds. */
  async function manyUsers(): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-output-'))
    const users = Array.from({ length: 1200 }, (_, i) => ({ id: `user-${i}`, name: `User ${i} ${'n'.repeat(150)}` }))
    writeFileSync(join(dir, 'fixture.json'), JSON.stringify({ users }))
    const loaded = await startServer(join(dir, 'data'), '--fixture', join(dir, 'fixture.json'))
    await loaded.stop()
    return dir
  }

  test('reaches a reader that lags whole; a reader that leaves early ends the command quietly', async () => {
    const dir = await manyUsers()
    try {
      // Through a shell's pipe, as an operator runs it (`| jq`, `| head`): it holds 64 KiB.
      const piped = (reader: string) =>
        Bun.spawnSync(['bash', '-c', `set -o pipefail; "$0" users list --json --data "$1" | ${reader}`, BIN, join(dir, 'data')], {
          env: { ...process.env, ...backendEnv(join(dir, 'data')) }, // the run's PostgreSQL and S3, when it has them
        })
      // The reader starts late on purpose: exiting with output still in hand cut it at 64 KiB.
      const lagging = piped('(sleep 0.3; cat)')
      expect(lagging.exitCode).toBe(0)
      expect((JSON.parse(lagging.stdout.toString()) as unknown[]).length).toBe(1200)

      const leaving = piped('head -c 10')
      expect({ code: leaving.exitCode, out: leaving.stdout.toString(), err: leaving.stderr.toString() }).toEqual({
        code: 0,
        out: lagging.stdout.toString().slice(0, 10),
        err: '',
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
