import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { DEFAULT_UNCLAIMED_PUBLISHER_ID, UUID_PATTERN } from '../../src/domain/ids'
import { insertRows } from '../../src/store/bulk'
import { feedPosition } from '../../src/store/changes'
import { addPublisher, addUser, aliceWithPublisher, makeTestApp, publish, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

describe('GET /users', () => {
  test('returns the caller', async () => {
    const token = await addUser(t, 'alice')
    const res = await t.call('GET', '/users', { token })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ id: 'alice', email: 'alice@example.com', name: 'ALICE', isAdmin: false, isApproved: true })
  })

  test.each([
    [undefined, 'unauthorized'],
    ['Bearer nope', 'unauthorized'],
    ['Basic abc', 'unauthorized'],
  ])('answers 401 for authorization %p', async (header) => {
    const res = await t.call('GET', '/users', { headers: header ? { authorization: header } : {} })
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('unauthorized')
    expect(res.body.message).toBeString()
  })
})

describe('POST /publishers', () => {
  test('creates a publisher with the caller as owner', async () => {
    const token = await addUser(t, 'alice')
    const res = await t.call('POST', '/publishers', {
      token,
      body: { id: 'acme', name: 'Acme', website: 'https://acme.dev', status: 'PublisherStatusBanned', members: [{}], createdAt: 'x' },
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      id: 'acme',
      name: 'Acme',
      website: 'https://acme.dev',
      status: 'PublisherStatusActive',
      createdAt: '2026-01-02T03:04:05.678Z',
    })
    expect(res.body.members).toEqual([
      { id: expect.stringMatching(UUID_PATTERN), role: 'owner', user: { id: 'alice', name: 'ALICE', email: 'alice@example.com' } },
    ])
  })

  test('needs a bearer token', async () => {
    expect((await t.call('POST', '/publishers', { body: { id: 'acme', name: 'A' } })).status).toBe(401)
  })

  test.each([
    ['no id', { name: 'A' }, 'id: a publisher id is required'],
    [
      'an uppercase id',
      { id: 'Acme', name: 'A' },
      'Must start with a lowercase letter and can only contain lowercase letters, digits, and hyphens.',
    ],
    ['a leading digit', { id: '1acme', name: 'A' }, 'Must start with a lowercase letter'],
    ['a long id', { id: 'a'.repeat(65), name: 'A' }, 'id: must be at most 64 characters'],
    ['no name', { id: 'acme' }, 'name: a publisher name is required'],
    ['a non-http website', { id: 'acme', name: 'A', website: 'ftp://x' }, 'body.website: must be an http(s) URL'],
    ['a numeric name', { id: 'acme', name: 42 }, 'body.name: must be a string'],
  ])('refuses %s with 400', async (_, body, message) => {
    const token = await addUser(t, 'alice')
    const res = await t.call('POST', '/publishers', { token, body })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(message)
  })

  test('refuses a duplicate id with 409 and the upstream message', async () => {
    const token = await addUser(t, 'alice')
    await addPublisher(t, token, 'acme')
    const res = await t.call('POST', '/publishers', { token, body: { id: 'acme', name: 'Again' } })
    expect(res.status).toBe(409)
    expect(res.body).toEqual({ error: 'publisher_exists', message: 'Publisher ID already exists.' })
  })

  test('only an admin makes the unclaimed publisher: a user who did would own every node put there to be claimed', async () => {
    const mallory = await addUser(t, 'mallory')
    const squat = await t.call('POST', '/publishers', { token: mallory, body: { id: DEFAULT_UNCLAIMED_PUBLISHER_ID, name: 'Unclaimed' } })
    expect({ status: squat.status, error: squat.body.error }).toEqual({ status: 403, error: 'reserved_publisher_id' })
    expect((await t.call('GET', `/publishers/${DEFAULT_UNCLAIMED_PUBLISHER_ID}`)).status).toBe(404)
    const root = await addUser(t, 'root', { admin: true })
    await addPublisher(t, root, DEFAULT_UNCLAIMED_PUBLISHER_ID)
  })

  test('limits publishers per user with 403', async () => {
    const token = await addUser(t, 'alice')
    for (let i = 0; i < 5; i++) await addPublisher(t, token, `p${i}`)
    const res = await t.call('POST', '/publishers', { token, body: { id: 'p5', name: 'P' } })
    expect(res.status).toBe(403)
    expect(res.body.message).toBe('User has reached the maximum number of publishers.')
  })

  test('the limit holds for creations sent at once', async () => {
    const token = await addUser(t, 'alice')
    for (let i = 0; i < 2; i++) await addPublisher(t, token, `p${i}`)
    const ids = ['q0', 'q1', 'q2', 'q3', 'q4', 'q5']
    const results = await Promise.all(ids.map((id) => t.call('POST', '/publishers', { token, body: { id, name: 'Q' } })))
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 403, 403, 403])
    for (const r of results.filter((r) => r.status === 403)) {
      expect(r.body).toEqual({ error: 'publisher_limit', message: 'User has reached the maximum number of publishers.' })
    }
    expect((await t.call('GET', '/users/publishers', { token })).body).toHaveLength(5)
  })

  test('malformed JSON is a 400, and another content type or a compressed body a 415', async () => {
    const token = await addUser(t, 'alice')
    const bad = await t.call('POST', '/publishers', { token, body: '{"id": "acme",' })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({ error: 'invalid_json', message: 'body: malformed JSON' })
    const form = await t.call('POST', '/publishers', {
      token,
      body: 'id=acme',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(form.status).toBe(415)
    expect(form.body.error).toBe('unsupported_media_type')
    const gzipped = await t.call('POST', '/publishers', {
      token,
      body: Bun.gzipSync(JSON.stringify({ id: 'acme', name: 'Acme' })),
      headers: { 'content-encoding': 'gzip' },
    })
    expect(gzipped).toMatchObject({
      status: 415,
      body: { error: 'unsupported_media_type', message: 'send the body uncompressed: Content-Encoding gzip is not accepted' },
    })
    const plain = { token, body: { id: 'acme', name: 'Acme' }, headers: { 'content-encoding': 'identity' } }
    expect((await t.call('POST', '/publishers', plain)).status).toBe(201)
  })

  test('a JSON body that is not an object (an array, a number, a string, null) is a 400 on every write route, and changes nothing', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const admin = await addUser(t, 'ada', { admin: true })
    const writes: [string, string, string | undefined][] = [
      ['POST', '/publishers', token],
      ['PUT', '/publishers/acme', token],
      ['POST', '/publishers/acme/tokens', token],
      ['POST', '/publishers/acme/nodes', token],
      ['PUT', '/publishers/acme/nodes/pack', token],
      ['POST', '/publishers/acme/nodes/pack/versions', undefined],
      ['POST', '/publishers/acme/nodes/pack/ban', admin],
      ['POST', '/bulk/nodes/versions', undefined],
    ]
    const before = await feedPosition(t.deps.db)
    for (const [method, path, caller] of writes) {
      for (const body of ['[1,2]', '[]', '5', '"acme"', 'null']) {
        const res = await t.call(method, path, { token: caller, body })
        expect([method, path, body, res.status, res.body]).toEqual([
          method,
          path,
          body,
          400,
          { error: 'bad_request', message: 'body: must be a JSON object' },
        ])
      }
    }
    expect(await feedPosition(t.deps.db)).toEqual(before)
  })

  test('an array where the body has an object (a node, its version, translations, a license, a publisher) is a 400 naming it, and changes nothing', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const before = await feedPosition(t.deps.db)
    const publishing = (node: unknown, nodeVersion: unknown = { version: '2.0.0' }) => ({
      body: { personal_access_token: pat, node, node_version: nodeVersion },
    })
    const cases: [string, string, { token?: string; body: unknown }, string][] = [
      ['POST', '/publishers/acme/nodes/pack/versions', publishing([1, 2]), 'body.node'],
      ['POST', '/publishers/acme/nodes/pack/versions', publishing({ id: 'pack' }, ['2.0.0']), 'body.node_version'],
      ['POST', '/publishers/acme/nodes/pack/versions', publishing({ id: 'pack', translations: ['a', { b: 1 }] }), 'body.node.translations'],
      ['POST', '/publishers/acme/nodes', { token, body: { id: 'other', name: 'O', translations: [] } }, 'body.translations'],
      ['PUT', '/publishers/acme/nodes/pack', { token, body: { license: ['MIT'] } }, 'body.license'],
      ['PUT', '/publishers/acme/nodes/pack', { token, body: { publisher: ['acme'] } }, 'body.publisher'],
      ['POST', '/bulk/nodes/versions', { body: { node_versions: [['pack', '1.0.0']] } }, 'body.node_versions.0'],
    ]
    for (const [method, path, opts, where] of cases) {
      const res = await t.call(method, path, opts)
      expect([path, res.status, res.body.message]).toEqual([path, 400, `${where}: must be a JSON object, not an array`])
    }
    expect(await feedPosition(t.deps.db)).toEqual(before)
    // Arrays where the body has them are taken.
    expect((await t.call('PUT', '/publishers/acme/nodes/pack', { token, body: { tags: ['a'], license: 'MIT' } })).status).toBe(200)
  })
})

describe('GET /publishers and /publishers/{id}', () => {
  test('lists publishers by id; emails only to members', async () => {
    const alice = await addUser(t, 'alice')
    const bob = await addUser(t, 'bob')
    await addPublisher(t, alice, 'zeta')
    await addPublisher(t, bob, 'beta')
    const anonymous = await t.call('GET', '/publishers')
    expect(anonymous.status).toBe(200)
    expect(anonymous.body.map((p: { id: string }) => p.id)).toEqual(['beta', 'zeta'])
    expect(anonymous.body[0].members[0].user).toEqual({ id: 'bob', name: 'BOB' })
    const asAlice = await t.call('GET', '/publishers', { token: alice })
    expect(asAlice.body[1].members[0].user.email).toBe('alice@example.com')
    expect(asAlice.body[0].members[0].user.email).toBeUndefined()
  })

  test('more publishers than one step (1,000): every one in id order with its members, banned ones to admins only', async () => {
    const alice = await addUser(t, 'alice')
    const ada = await addUser(t, 'ada', { admin: true })
    const T = '2026-01-01T00:00:00.000Z'
    // 2,005 in all, 5 banned: anyone else sees exactly two steps' worth, and the step after them is empty.
    const ids = Array.from({ length: 2_005 }, (_, i) => `pub-${String(i).padStart(4, '0')}`)
    const banned = new Set(ids.filter((_, i) => i % 400 === 399))
    await insertRows(
      t.deps.db,
      'publishers',
      ids.map((id) => ({ id, name: `${id} name`, status: banned.has(id) ? 'banned' : 'active', created_at: T, updated_at: T })),
    )
    const owned = [ids[0]!, ids[999]!, ids[1000]!, ids[2004]!]
    await insertRows(
      t.deps.db,
      'publisher_members',
      owned.map((id) => ({ id: crypto.randomUUID(), publisher_id: id, user_id: 'alice', role: 'owner', created_at: T })),
    )
    const anonymous = await t.call('GET', '/publishers')
    expect(anonymous.headers.get('content-type')).toBe('application/json')
    expect(anonymous.body.map((p: { id: string }) => p.id)).toEqual(ids.filter((id) => !banned.has(id)))
    const withMembers = (body: any[]) => body.filter((p) => p.members.length).map((p) => [p.id, p.members[0].user])
    const alices = owned.map((id) => [id, { id: 'alice', name: 'ALICE' }])
    expect(withMembers(anonymous.body)).toEqual(alices)
    const asAlice = await t.call('GET', '/publishers', { token: alice })
    expect(withMembers(asAlice.body)).toEqual(alices.map(([id, user]) => [id, { ...(user as object), email: 'alice@example.com' }]))
    const asAdmin = await t.call('GET', '/publishers', { token: ada })
    expect(asAdmin.body.map((p: { id: string }) => p.id)).toEqual(ids)
    expect(asAdmin.body.filter((p: any) => p.status === 'PublisherStatusBanned').map((p: any) => p.id)).toEqual([...banned])
  })

  test('reads one publisher, 404 for an unknown one', async () => {
    const alice = await addUser(t, 'alice')
    await addPublisher(t, alice, 'acme')
    expect((await t.call('GET', '/publishers/acme')).body.name).toBe('acme name')
    const missing = await t.call('GET', '/publishers/nope')
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe('not_found')
  })

  test('GET /users/publishers/ lists the caller’s publishers, with or without the slash', async () => {
    const alice = await addUser(t, 'alice')
    await addPublisher(t, alice, 'acme')
    for (const path of ['/users/publishers/', '/users/publishers']) {
      const res = await t.call('GET', path, { token: alice })
      expect(res.status).toBe(200)
      expect(res.body.map((p: { id: string }) => p.id)).toEqual(['acme'])
    }
    expect((await t.call('GET', '/users/publishers/')).status).toBe(401)
  })
})

describe('PUT /publishers/{id}', () => {
  test('applies the sent fields and ignores server-owned ones', async () => {
    const alice = await addUser(t, 'alice')
    await addPublisher(t, alice, 'acme')
    const res = await t.call('PUT', '/publishers/acme', {
      token: alice,
      body: { id: 'other', name: 'New', description: 'd', status: 'PublisherStatusBanned', logo: null },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: 'acme', name: 'New', description: 'd', status: 'PublisherStatusActive', logo: '' })
  })

  test('only an owner may update: 401, 403, 404', async () => {
    const alice = await addUser(t, 'alice')
    const bob = await addUser(t, 'bob')
    await addPublisher(t, alice, 'acme')
    expect((await t.call('PUT', '/publishers/acme', { body: { name: 'x' } })).status).toBe(401)
    const other = await t.call('PUT', '/publishers/acme', { token: bob, body: { name: 'x' } })
    expect(other.status).toBe(403)
    expect(other.body).toEqual({ error: 'permission_denied', message: 'Permission denied' })
    expect((await t.call('PUT', '/publishers/nope', { token: alice, body: { name: 'x' } })).status).toBe(404)
  })
})

describe('GET /publishers/validate', () => {
  test('answers available, or 400 with the upstream messages', async () => {
    const alice = await addUser(t, 'alice')
    await addPublisher(t, alice, 'acme')
    expect(await t.call('GET', '/publishers/validate?username=fresh')).toMatchObject({ status: 200, body: { isAvailable: true } })
    expect((await t.call('GET', '/publishers/validate?username=acme')).body.message).toBe('Publisher ID already exists.')
    expect((await t.call('GET', '/publishers/validate')).body.message).toBe('Username parameter is required')
    const bad = await t.call('GET', '/publishers/validate?username=Bad_Id')
    expect(bad.status).toBe(400)
    expect(bad.body.message).toStartWith('Must start with a lowercase letter')
  })
})

describe('publisher tokens', () => {
  test('create shows the token once; list masks it; delete removes it', async () => {
    const alice = await addUser(t, 'alice')
    await addPublisher(t, alice, 'acme')
    const created = await t.call('POST', '/publishers/acme/tokens', { token: alice, body: { name: 'ci', description: 'for CI' } })
    expect(created.status).toBe(201)
    const secret: string = created.body.token
    expect(secret.length).toBeGreaterThanOrEqual(40)
    const listed = await t.call('GET', '/publishers/acme/tokens', { token: alice })
    expect(listed.body).toEqual([
      {
        id: expect.any(String),
        name: 'ci',
        description: 'for CI',
        createdAt: '2026-01-02T03:04:05.678Z',
        token: `${secret.slice(0, 4)}***`,
      },
    ])
    expect(JSON.stringify(listed.body)).not.toContain(secret)
    const id = listed.body[0].id
    expect((await t.call('DELETE', `/publishers/acme/tokens/${id}`, { token: alice })).status).toBe(204)
    expect((await t.call('GET', '/publishers/acme/tokens', { token: alice })).body).toEqual([])
    expect((await t.call('DELETE', `/publishers/acme/tokens/${id}`, { token: alice })).status).toBe(404)
  })

  test('only owners manage tokens; a name is required', async () => {
    const alice = await addUser(t, 'alice')
    const bob = await addUser(t, 'bob')
    await addPublisher(t, alice, 'acme')
    expect((await t.call('GET', '/publishers/acme/tokens', { token: bob })).status).toBe(403)
    expect((await t.call('POST', '/publishers/acme/tokens', { token: bob, body: { name: 'x' } })).status).toBe(403)
    expect((await t.call('GET', '/publishers/acme/tokens')).status).toBe(401)
    expect((await t.call('POST', '/publishers/acme/tokens', { token: alice, body: {} })).status).toBe(400)
    expect((await t.call('GET', '/publishers/nope/tokens', { token: alice })).status).toBe(404)
  })
})
