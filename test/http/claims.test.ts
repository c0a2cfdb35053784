/** Claim-my-node against a GitHub-compatible API started on 127.0.0.1, through the real host client. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { DEFAULT_UNCLAIMED_PUBLISHER_ID as UNCLAIMED } from '../../src/domain/ids'
import { CLAIM_WINDOW_MS, CLAIMS_PER_WINDOW } from '../../src/services/claims'
import { createRepoHost } from '../../src/upstream/repohost'
import { addPublisher, addUser, aliceWithPublisher, makeTestApp, type TestApp } from '../support/app'
import { startRepoHost, type FakeRepoHost } from '../support/repohost'

let t: TestApp
let host: FakeRepoHost
let alice: string
let root: string

async function setup(opts: { timeoutMs?: number } = {}) {
  host = startRepoHost()
  t = await makeTestApp({ deps: { repoHost: createRepoHost({ apiUrl: host.url, timeoutMs: opts.timeoutMs ?? 5000 }) } })
  root = await addUser(t, 'root', { admin: true })
  await addPublisher(t, root, UNCLAIMED)
  await addNode('legacy', `${host.web}/Octo/Legacy.git`)
  alice = (await aliceWithPublisher(t)).token
  host.users.set('gh-alice', 'alice-gh')
  host.repos.set('octo/legacy', { admins: ['alice-gh'] })
}

async function addNode(id: string, repository: string) {
  const res = await t.call('POST', `/publishers/${UNCLAIMED}/nodes`, { token: root, body: { id, repository } })
  if (res.status !== 201) throw new Error(`node ${id}: ${res.status} ${JSON.stringify(res.body)}`)
}

const claim = (body: unknown = { REPOHOST_TOKEN: 'gh-alice' }, opts: { token?: string; publisher?: string; node?: string } = {}) =>
  t.call('POST', `/publishers/${opts.publisher ?? 'acme'}/nodes/${opts.node ?? 'legacy'}/claim-my-node`, {
    token: 'token' in opts ? opts.token : alice,
    body,
  })

const errorOf = (res: { status: number; body: any }) => `${res.status} ${res.body?.error}`

beforeEach(() => setup())
afterEach(async () => {
  await host.stop()
  await t.cleanup()
})

describe('a successful claim', () => {
  test('204 with no body; the node moves to the publisher and every read, list and search shows it at once', async () => {
    // Warm the caches first: they must not keep the old publisher.
    expect((await t.call('GET', '/nodes/legacy')).body.publisher.id).toBe(UNCLAIMED)
    expect((await t.call('GET', '/nodes/search?search=legacy')).body.nodes[0].publisher.id).toBe(UNCLAIMED)
    const res = await claim()
    expect(res.status).toBe(204)
    expect(res.body).toBeUndefined()
    expect((await t.call('GET', '/nodes/legacy', { headers: { 'cache-control': 'no-cache' } })).body.publisher.id).toBe('acme')
    expect((await t.call('GET', '/nodes/search?search=legacy')).body.nodes[0].publisher.id).toBe('acme')
    expect((await t.call('GET', '/nodes?node_id=legacy')).body.nodes[0].publisher.id).toBe('acme')
    expect((await t.call('GET', '/nodes/search?search=acme')).body.nodes.map((n: any) => n.id)).toEqual(['legacy'])
    expect((await t.call('GET', '/publishers/acme/nodes/v2')).body.nodes.map((n: any) => n.id)).toEqual(['legacy'])
    expect((await t.call('GET', `/publishers/${UNCLAIMED}/nodes/v2`)).body.total).toBe(0)
  })

  test('asks the host who the token belongs to and whether that user administers the repository, with the token as bearer', async () => {
    await claim()
    expect(host.requests).toEqual([
      { path: '/user', authorization: 'Bearer gh-alice' },
      { path: '/repos/Octo/Legacy', authorization: 'Bearer gh-alice' },
    ])
  })

  test('admin right shown only by the collaborator permission call counts too', async () => {
    host.repos.set('octo/legacy', { noPermissions: true, collaborators: { 'alice-gh': 'admin' } })
    expect((await claim()).status).toBe(204)
    expect(host.requests.map((r) => r.path)).toEqual([
      '/user',
      '/repos/Octo/Legacy',
      '/repos/Octo/Legacy/collaborators/alice-gh/permission',
    ])
  })

  test('GH_TOKEN is accepted for REPOHOST_TOKEN', async () => {
    expect((await claim({ GH_TOKEN: 'gh-alice' })).status).toBe(204)
  })

  test('is recorded in the audit log with who, from where, the repository and the host user; the token is nowhere', async () => {
    await claim()
    const rows = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'node.claim').execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ actor_id: 'alice', target_kind: 'node', target_id: 'legacy' })
    expect(JSON.parse(rows[0]!.before_json!)).toEqual({ publisher: UNCLAIMED })
    expect(JSON.parse(rows[0]!.after_json!)).toEqual({
      publisher: 'acme',
      repository: 'Octo/Legacy',
      host: host.web.slice(7),
      host_user: 'alice-gh',
    })
    const everything = JSON.stringify(await t.deps.db.selectFrom('audit_log').selectAll().execute()) + t.logs.join('\n')
    expect(everything).not.toContain('gh-alice')
  })

  test('a second claim of the node is 403: it is claimed', async () => {
    expect((await claim()).status).toBe(204)
    const again = await claim()
    expect(again.status).toBe(403)
    expect(again.body).toEqual({ error: 'node_claimed', message: 'node is already claimed' })
  })

  test('the new publisher can publish to the node, the unclaimed publisher no longer can', async () => {
    await claim()
    const pat = (await t.call('POST', '/publishers/acme/tokens', { token: alice, body: { name: 'ci' } })).body.token
    const body = (token: string) => ({ personal_access_token: token, node: { id: 'legacy' }, node_version: { version: '2.0.0' } })
    expect((await t.call('POST', '/publishers/acme/nodes/legacy/versions', { body: body(pat) })).status).toBe(201)
    const rootPat = (await t.call('POST', `/publishers/${UNCLAIMED}/tokens`, { token: root, body: { name: 'x' } })).body.token
    expect(errorOf(await t.call('POST', `/publishers/${UNCLAIMED}/nodes/legacy/versions`, { body: body(rootPat) }))).toBe(
      '403 permission_denied',
    )
  })
})

describe('refusals before the host is asked', () => {
  test('401 without a bearer token; 404 for an unknown publisher; 403 for a caller who is not an owner', async () => {
    expect(errorOf(await claim(undefined, { token: undefined }))).toBe('401 unauthorized')
    expect(errorOf(await claim(undefined, { publisher: 'nobody' }))).toBe('404 not_found')
    const mia = await addUser(t, 'mia')
    expect(errorOf(await claim(undefined, { token: mia }))).toBe('403 permission_denied')
    expect(host.requests).toEqual([])
  })

  test('400 without a token, with an empty one, or with one that is not a token; the value is never echoed', async () => {
    for (const body of [{}, { REPOHOST_TOKEN: '' }, { GH_TOKEN: '   ' }, { REPOHOST_TOKEN: 'two\nlines' }, { REPOHOST_TOKEN: 42 }]) {
      const res = await claim(body)
      expect(res.status).toBe(400)
      expect(res.body.message).toContain('REPOHOST_TOKEN')
      expect(res.body.message).not.toContain('two')
    }
    expect(host.requests).toEqual([])
  })

  test('404 for an unknown or deleted node; 403 for a node of another publisher; 403 for a banned one', async () => {
    expect(errorOf(await claim(undefined, { node: 'nope' }))).toBe('404 not_found')
    await addNode('gone', `${host.web}/octo/gone`)
    await t.call('DELETE', `/publishers/${UNCLAIMED}/nodes/gone`, { token: root })
    expect(errorOf(await claim(undefined, { node: 'gone' }))).toBe('404 not_found')
    await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id: 'mine', repository: `${host.web}/octo/mine` } })
    expect(errorOf(await claim(undefined, { node: 'mine' }))).toBe('403 node_claimed')
    await addNode('spam', `${host.web}/octo/spam`)
    await t.call('POST', `/publishers/${UNCLAIMED}/nodes/spam/ban`, { token: root })
    expect(errorOf(await claim(undefined, { node: 'spam' }))).toBe('403 node_banned')
    expect(host.requests).toEqual([])
  })

  test('400 for a repository URL that names no repository on the host, saying so', async () => {
    await addNode('elsewhere', 'https://gitlab.com/octo/elsewhere')
    await addNode('ownerless', `${host.web}/octo`)
    await addNode('blank', '')
    for (const node of ['elsewhere', 'ownerless', 'blank']) {
      const res = await claim(undefined, { node })
      expect(errorOf(res)).toBe('400 invalid_repository')
      expect(res.body.message).toContain(`names no repository on ${host.web.slice(7)}`)
    }
    expect(host.requests).toEqual([])
  })

  test('claiming into the unclaimed publisher itself is 400', async () => {
    expect(errorOf(await claim(undefined, { publisher: UNCLAIMED, token: root }))).toBe('400 bad_request')
  })
})

describe('what the host says', () => {
  test('a token the host does not accept: 403', async () => {
    const res = await claim({ REPOHOST_TOKEN: 'stolen' })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ error: 'invalid_repohost_token', message: `REPOHOST_TOKEN was not accepted by ${host.web.slice(7)}` })
  })

  test('a repository the host does not show the user: 403 naming the repository and the host user', async () => {
    host.repos.delete('octo/legacy')
    const res = await claim()
    expect(errorOf(res)).toBe('403 not_repository_admin')
    expect(res.body.message).toContain('Octo/Legacy')
    expect(res.body.message).toContain('"alice-gh"')
  })

  test('a user who may only write: 403 naming the repository and the host user', async () => {
    host.repos.set('octo/legacy', { collaborators: { 'alice-gh': 'write' } })
    const res = await claim()
    expect(errorOf(res)).toBe('403 not_repository_admin')
    expect(res.body.message).toBe(
      `You (${host.web.slice(7)} user "alice-gh") do not have admin permission on repository Octo/Legacy; only repository administrators can claim nodes`,
    )
    expect((await t.call('GET', '/nodes/legacy')).body.publisher.id).toBe(UNCLAIMED)
  })

  test(`a user's claims past ${CLAIMS_PER_WINDOW} in ${CLAIM_WINDOW_MS / 60_000} minutes: 429 before the host is asked`, async () => {
    for (let i = 0; i < CLAIMS_PER_WINDOW; i++) expect((await claim({ REPOHOST_TOKEN: 'stolen' })).status).toBe(403)
    const asked = host.requests.length
    const res = await claim()
    expect(errorOf(res)).toBe('429 rate_limited')
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(host.requests.length).toBe(asked)
    // Another user's claims are their own.
    const bob = await addUser(t, 'bob')
    await addPublisher(t, bob, 'bobs')
    expect(errorOf(await claim({ REPOHOST_TOKEN: 'stolen' }, { token: bob, publisher: 'bobs' }))).toBe('403 invalid_repohost_token')
  })

  test('rate limited with 429: 429 with the Retry-After the host asked for', async () => {
    host.misbehave = 'rate-limit-429'
    const res = await claim()
    expect(errorOf(res)).toBe('429 rate_limited')
    expect(res.headers.get('retry-after')).toBe('42')
  })

  test("rate limited with GitHub's 403 and no requests remaining: 429 with Retry-After until the reset", async () => {
    host.misbehave = 'rate-limit-403'
    const res = await claim()
    expect(errorOf(res)).toBe('429 rate_limited')
    const wait = Number(res.headers.get('retry-after'))
    expect(wait).toBeGreaterThan(100)
    expect(wait).toBeLessThanOrEqual(120)
  })

  test('a 5xx from the host: 503', async () => {
    host.misbehave = 'error-502'
    const res = await claim()
    expect(errorOf(res)).toBe('503 upstream_failed')
    expect(res.body.message).toBe(`the repository host ${host.web.slice(7)} answered 502; try again later`)
  })

  test('a reply that is not what the API answers: 502', async () => {
    host.misbehave = 'garbage'
    expect(errorOf(await claim())).toBe('502 upstream_failed')
  })

  test('a redirect within the API is followed (a renamed repository); one to another origin is not, and the token stays here', async () => {
    host.misbehave = 'redirect-here'
    expect((await claim()).status).toBe(204)
    const other = startRepoHost()
    try {
      await addNode('second', `${host.web}/octo/legacy`)
      host.misbehave = 'redirect-away'
      host.elsewhere = other.url
      expect(errorOf(await claim(undefined, { node: 'second' }))).toBe('502 upstream_failed')
      expect(other.requests).toEqual([])
    } finally {
      await other.stop()
    }
  })
})

describe('a host that cannot be reached or does not answer', () => {
  test('unreachable: 503', async () => {
    const t2 = await makeTestApp()
    try {
      const token = await addUser(t2, 'root', { admin: true })
      await addPublisher(t2, token, UNCLAIMED)
      await t2.call('POST', `/publishers/${UNCLAIMED}/nodes`, {
        token,
        body: { id: 'legacy', repository: 'http://127.0.0.1:9/octo/legacy' },
      })
      const { token: owner } = await aliceWithPublisher(t2)
      const res = await t2.call('POST', '/publishers/acme/nodes/legacy/claim-my-node', { token: owner, body: { REPOHOST_TOKEN: 'x' } })
      expect(res.body).toEqual({
        error: 'upstream_failed',
        message: 'the repository host 127.0.0.1:9 could not be reached; try again later',
      })
      expect(res.status).toBe(503)
    } finally {
      await t2.cleanup()
    }
  })

  test('slower than the timeout: 503 saying so, and the node stays unclaimed', async () => {
    await host.stop()
    await t.cleanup()
    await setup({ timeoutMs: 150 })
    host.misbehave = 'hang'
    const res = await claim()
    expect(res.status).toBe(503)
    expect(res.body).toEqual({
      error: 'upstream_timeout',
      message: `the repository host ${host.web.slice(7)} did not answer within 0.2 s; try again later`,
    })
    expect((await t.call('GET', '/nodes/legacy')).body.publisher.id).toBe(UNCLAIMED)
  })
})

describe('two claims of one node at the same time', () => {
  test('exactly one wins; the other is 403, and one claim is recorded', async () => {
    const bob = await addUser(t, 'bob')
    await addPublisher(t, bob, 'bobs')
    host.users.set('gh-bob', 'bob-gh')
    host.repos.set('octo/legacy', { admins: ['alice-gh', 'bob-gh'] })
    // Both claims have passed every check and asked the host before either answer comes back.
    host.holdRepos = 2
    const [a, b] = await Promise.all([claim(), claim({ REPOHOST_TOKEN: 'gh-bob' }, { token: bob, publisher: 'bobs' })])
    expect([a.status, b.status].sort()).toEqual([204, 403])
    const loser = a.status === 403 ? a : b
    expect(loser.body.error).toBe('node_claimed')
    const winner = a.status === 204 ? 'acme' : 'bobs'
    expect((await t.call('GET', '/nodes/legacy')).body.publisher.id).toBe(winner)
    expect(await t.deps.db.selectFrom('audit_log').select('action').where('action', '=', 'node.claim').execute()).toHaveLength(1)
  })
})
