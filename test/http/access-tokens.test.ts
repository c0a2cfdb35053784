/** Users' bearer tokens over HTTP: revoked and expired tokens get 401 from the next request on; last use; the audit trail. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createAccessToken, LAST_USE_PRECISION_MS, listAccessTokens, revokeToken } from '../../src/services/access-tokens'
import { addUser, makeTestApp, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

const DAY = 24 * 60 * 60 * 1000
const later = (ms: number) => (t.clock.now = new Date(t.clock.now.getTime() + ms))
const me = (token: string) => t.call('GET', '/users', { token })

describe('access tokens', () => {
  test("a revoked token gets 401 on its very next request; the user's other tokens go on working", async () => {
    const first = await addUser(t, 'alice')
    const second = await createAccessToken(t.deps, undefined, 'alice')
    expect((await me(first)).status).toBe(200)
    const id = (await listAccessTokens(t.deps, 'alice')).find((x) => x.token === `${first.slice(0, 4)}***`)!.id
    expect(await revokeToken(t.deps, undefined, id)).toMatchObject({ alreadyRevoked: false, token: { state: 'revoked' } })
    const refused = await me(first)
    expect(refused.status).toBe(401)
    expect(refused.body).toEqual({ error: 'unauthorized', message: 'auth token revoked' })
    expect(refused.headers.get('www-authenticate')).toBe('Bearer')
    expect((await me(second)).status).toBe(200)
    // Writes refuse it too; public reads treat its bearer as anonymous.
    expect((await t.call('POST', '/publishers', { token: first, body: { id: 'acme', name: 'Acme' } })).status).toBe(401)
    expect((await t.call('GET', '/nodes', { token: first })).status).toBe(200)
    expect(await revokeToken(t.deps, undefined, id)).toMatchObject({ alreadyRevoked: true })
    await expect(revokeToken(t.deps, undefined, 'no-such-id')).rejects.toThrow('token "no-such-id" not found')
  })

  test('a token made to expire works until that moment and gets 401 from then on', async () => {
    await addUser(t, 'alice')
    const token = await createAccessToken(t.deps, undefined, 'alice', { expiresInDays: 2 })
    const [row] = await listAccessTokens(t.deps, 'alice').then((all) => all.filter((x) => x.expiresAt))
    expect(row!.expiresAt).toBe(new Date(t.clock.now.getTime() + 2 * DAY).toISOString())
    later(2 * DAY - 1)
    expect((await me(token)).status).toBe(200)
    later(1)
    expect((await me(token)).body).toEqual({ error: 'unauthorized', message: 'auth token expired' })
    expect((await listAccessTokens(t.deps, 'alice')).map((x) => x.state).sort()).toEqual(['active', 'expired'])
  })

  test('tokens are listed masked with their first 4 characters, never in full', async () => {
    const token = await addUser(t, 'alice')
    const [listed] = await listAccessTokens(t.deps, 'alice')
    expect(listed).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      userId: 'alice',
      token: `${token.slice(0, 4)}***`,
      createdAt: t.clock.now.toISOString(),
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      state: 'active',
    })
    await expect(listAccessTokens(t.deps, 'ghost')).rejects.toThrow('user "ghost" not found')
  })

  test('last use is recorded at most once per few minutes per token', async () => {
    const token = await addUser(t, 'alice')
    const lastUsed = async () => (await listAccessTokens(t.deps, 'alice'))[0]!.lastUsedAt
    const first = t.clock.now.toISOString()
    await me(token)
    expect(await lastUsed()).toBe(first)
    later(LAST_USE_PRECISION_MS - 1)
    await me(token)
    expect(await lastUsed()).toBe(first)
    later(1)
    await me(token)
    expect(await lastUsed()).toBe(t.clock.now.toISOString())
    // An unknown, revoked or expired token records nothing.
    await me(`${token}x`)
    expect(await lastUsed()).toBe(t.clock.now.toISOString())
  })

  test('creation and revocation are in the audit log, by token id, never the token', async () => {
    const token = await addUser(t, 'alice')
    const { id } = (await listAccessTokens(t.deps, 'alice'))[0]!
    await revokeToken(t.deps, { address: 'cli' }, id)
    const rows = await t.deps.db.selectFrom('audit_log').selectAll().orderBy('id').execute()
    expect(rows.map((r) => [r.action, r.target_kind, r.target_id, r.actor_address, r.before_json, r.after_json])).toEqual([
      ['user.create', 'user', 'alice', '', null, JSON.stringify({ name: 'ALICE', isAdmin: false })],
      ['access_token.create', 'user', 'alice', '', null, JSON.stringify({ id, expiresAt: null })],
      ['access_token.revoke', 'user', 'alice', 'cli', JSON.stringify({ id }), null],
    ])
    expect(JSON.stringify(rows)).not.toContain(token)
    const hash = new Bun.CryptoHasher('sha256').update(token).digest('hex')
    expect(JSON.stringify(rows)).not.toContain(hash)
  })
})
