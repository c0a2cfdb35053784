/**
 * Credentials are refused at once on every instance of one registry (PostgreSQL when the run names it, else one data
 * directory), not after a follower's look: an access token revoked by the command line, a user banned by it, a
 * publisher token deleted on the other instance. Each is checked against the store on every request; nothing here
 * waits for another instance to catch up.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_DATABASE } from '../support/backends'
import { cli, ensureBinary, sendJson, startServerOn, type Server } from '../support/binary'

const shared = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-creds-'))
const dirs = TEST_DATABASE ? ['a', 'b'].map((n) => mkdtempSync(join(tmpdir(), `registry-mirror-e2e-creds-${n}-`))) : [shared, shared]
let a: Server
let b: Server

beforeAll(async () => {
  await ensureBinary()
  a = await startServerOn(dirs[0]!, shared)
  b = await startServerOn(dirs[1]!, shared)
}, 30_000)
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
  for (const dir of new Set([shared, ...dirs])) rmSync(dir, { recursive: true, force: true })
}, 30_000)

const json = (res: Response): Promise<any> => res.json()
const statusOf = async (res: Promise<Response>) => (await res).status
const both = (check: (url: string) => Promise<number>) => Promise.all([a, b].map((s) => check(s.url)))

test('a token revoked, a user banned or a publisher token deleted is refused at once on both instances', async () => {
  const token = cli(shared, 'users', 'create', '--id', 'alice', '--email', 'alice@example.com', '--name', 'Alice').out
  const spare = cli(shared, 'tokens', 'create', '--user', 'alice').out
  const bob = cli(shared, 'users', 'create', '--id', 'bob', '--email', 'bob@example.com', '--name', 'Bob').out
  const me = (t: string) => (url: string) => statusOf(sendJson(`${url}/users`, 'GET', undefined, t))
  expect(await both(me(token))).toEqual([200, 200])
  // A user's write: bob makes a publisher of his own on each instance.
  const bobCreates = (url: string) => statusOf(sendJson(`${url}/publishers`, 'POST', { id: `bob-${url.slice(-5)}`, name: 'Bob' }, bob))
  expect(await both(bobCreates)).toEqual([201, 201])

  const listed = JSON.parse(cli(shared, 'tokens', 'list', '--user', 'alice', '--json').out) as { id: string; token: string }[]
  const id = listed.find((t) => t.token === `${token.slice(0, 4)}***`)!.id
  expect(cli(shared, 'tokens', 'revoke', id).code).toBe(0)
  expect(await both(me(token))).toEqual([401, 401])
  expect(await both(me(spare))).toEqual([200, 200])
  expect(cli(shared, 'users', 'ban', '--id', 'bob').code).toBe(0)
  expect(await both(bobCreates)).toEqual([403, 403])

  // A publisher token deleted on A no longer publishes on B (nor on A).
  expect((await sendJson(`${a.url}/publishers`, 'POST', { id: 'acme', name: 'Acme' }, spare)).status).toBe(201)
  const pat = (await json(await sendJson(`${a.url}/publishers/acme/tokens`, 'POST', { name: 'ci' }, spare))).token
  const publish = (version: string) => (url: string) =>
    statusOf(
      sendJson(`${url}/publishers/acme/nodes/pack/versions`, 'POST', {
        personal_access_token: pat,
        node: { id: 'pack', name: 'Pack' },
        node_version: { version, dependencies: [] },
      }),
    )
  expect(await publish('1.0.0')(b.url)).toBe(201)
  const [listedPat] = await json(await sendJson(`${b.url}/publishers/acme/tokens`, 'GET', undefined, spare))
  expect((await sendJson(`${a.url}/publishers/acme/tokens/${listedPat.id}`, 'DELETE', undefined, spare)).status).toBe(204)
  // Refused as upstream refuses a token that matches none: 400.
  expect([await publish('1.0.1')(b.url), await publish('1.0.2')(a.url)]).toEqual([400, 400])
}, 30_000)
