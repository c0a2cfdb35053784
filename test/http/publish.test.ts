import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { makeTarGz, makeZip, samplePack } from '../support/archives'
import {
  addPublisher,
  addUser,
  aliceWithPublisher,
  makeTestApp,
  publish,
  publishActive,
  PUBLIC_URL,
  upload,
  type TestApp,
} from '../support/app'
import { holdWriteTurn, settled } from '../support/writes'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

describe('POST /publishers/{p}/nodes/{n}/versions', () => {
  test('creates the node on first publish and a pending version with a signed URL', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, {
      pat,
      node: 'blur-pack',
      version: 'v1.2',
      nodeFields: {
        name: 'Blur Pack',
        license: '{"file": "LICENSE"}',
        repository: 'https://github.com/acme/blur-pack',
        supported_comfyui_version: '>=0.3.0',
        supported_os: ['OS Independent'],
      },
      versionFields: { changelog: 'first', dependencies: ['numpy>=1.0'], supported_comfyui_frontend_version: '>=1.2' },
    })
    expect(res.status).toBe(201)
    const v = res.body.node_version
    expect(v).toMatchObject({
      node_id: 'blur-pack',
      version: '1.2.0',
      changelog: 'first',
      dependencies: ['numpy>=1.0'],
      deprecated: false,
      status: 'NodeVersionStatusPending',
      host_node_extract_status: 'pending',
      downloadUrl: '',
      supported_hostui_frontend_version: '>=1.2',
      createdAt: '2026-01-02T03:04:05.678Z',
    })
    expect(v.id).toMatch(/^[0-9a-f-]{36}$/)
    const url = new URL(res.body.signedUrl)
    expect(`${url.origin}${url.pathname}`).toBe(`${PUBLIC_URL}/archives/acme/blur-pack/1.2.0/node.zip`)
    expect(Number(url.searchParams.get('expires'))).toBe((Date.parse('2026-01-02T03:04:05.678Z') / 1000 + 900) | 0)
    const node = (await t.call('GET', '/nodes/blur-pack')).body
    expect(node).toMatchObject({
      id: 'blur-pack',
      name: 'Blur Pack',
      license: '{"file": "LICENSE"}',
      supported_hostui_version: '>=0.3.0',
      supported_os: ['OS Independent'],
      status: 'NodeStatusActive',
    })
    expect(node.publisher.id).toBe('acme')
    expect(node.latest_version.version).toBe('1.2.0')
  })

  test('the name defaults to the id; later publishes update sent node fields only', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0', nodeFields: { author: 'A' } })
    expect((await t.call('GET', '/nodes/pack')).body.name).toBe('pack')
    await publish(t, { pat, node: 'pack', version: '1.1.0', nodeFields: { description: 'new', author: null } })
    expect((await t.call('GET', '/nodes/pack')).body).toMatchObject({ description: 'new', author: 'A' })
  })

  test('a bearer token of a member works instead of a publisher token', async () => {
    const { token } = await aliceWithPublisher(t)
    const res = await t.call('POST', '/publishers/acme/nodes/pack/versions', { token, body: { node_version: { version: '1.0.0' } } })
    expect(res.status).toBe(201)
  })

  test('credentials: wrong token 400 (upstream wording), none 401, non-member 403', async () => {
    const { token: alice } = await aliceWithPublisher(t)
    const wrong = await publish(t, { pat: 'not-a-token', node: 'pack', version: '1.0.0' })
    expect(wrong.status).toBe(400)
    expect(wrong.body).toEqual({ error: 'invalid_personal_access_token', message: 'Invalid personal access token' })
    // An empty token (the CLI's prompt answered with Enter) is a token that does not match, as upstream: also beside
    // an owner's bearer token, as any other wrong token is.
    for (const token of [undefined, alice]) {
      const empty = await t.call('POST', '/publishers/acme/nodes/pack/versions', {
        token,
        body: { personal_access_token: '', node_version: { version: '1.0.0' } },
      })
      expect(empty).toMatchObject({
        status: 400,
        body: { error: 'invalid_personal_access_token', message: 'Invalid personal access token' },
      })
    }
    const none = await t.call('POST', '/publishers/acme/nodes/pack/versions', { body: { node_version: { version: '1.0.0' } } })
    expect(none.status).toBe(401)
    const bob = await addUser(t, 'bob')
    const outsider = await t.call('POST', '/publishers/acme/nodes/pack/versions', {
      token: bob,
      body: { node_version: { version: '1.0.0' } },
    })
    expect(outsider.status).toBe(403)
    expect(outsider.body.message).toBe('Permission denied')
  })

  test('a token of another publisher is refused, and so is a node of another publisher', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    await addPublisher(t, token, 'other')
    expect((await publish(t, { pat, publisher: 'other', node: 'pack', version: '1.0.0' })).status).toBe(400)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const otherPat = (await t.call('POST', '/publishers/other/tokens', { token, body: { name: 'x' } })).body.token
    const res = await publish(t, { pat: otherPat, publisher: 'other', node: 'pack', version: '2.0.0' })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ error: 'permission_denied', message: 'Permission denied' })
  })

  test('unknown publisher 404', async () => {
    // The message tells the publisher's 404 from an unmatched route's.
    expect(await publish(t, { pat: 'x', publisher: 'ghost', node: 'pack', version: '1.0.0' })).toMatchObject({
      status: 404,
      body: { error: 'not_found', message: 'publisher "ghost" not found' },
    })
  })

  test('duplicate version 409 with the upstream message, also after normalisation', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const again = await publish(t, { pat, node: 'pack', version: 'v1.0' })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: 'version_exists', message: 'The node version already exists' })
  })

  test('node ids are unique ignoring case', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'Pack', version: '1.0.0' })
    const res = await publish(t, { pat, node: 'pack', version: '2.0.0' })
    expect(res.status).toBe(409)
    expect(res.body.error).toBe('node_exists')
  })

  // Sent at once, the publishes all find no node before one of them creates it (on PostgreSQL they run side by side).
  test('parallel first publishes of a new node: each version is created, as one after another', async () => {
    const { pat } = await aliceWithPublisher(t)
    const versions = ['1.0.1', '1.0.2', '1.0.3', '1.0.4', '1.0.5', '1.0.6']
    const results = await Promise.all(versions.map((version) => publish(t, { pat, node: 'multi9', version })))
    expect(results.map((r) => [r.status, r.body.error])).toEqual(versions.map(() => [201, undefined]))
    const stored = await t.deps.db.selectFrom('node_versions').select('version').where('node_id', '=', 'multi9').execute()
    expect(stored.map((v) => v.version).sort()).toEqual(versions)
  })

  test('parallel first publishes of one version: one is created, the others get the version conflict', async () => {
    const { pat } = await aliceWithPublisher(t)
    const results = await Promise.all([1, 2, 3, 4].map(() => publish(t, { pat, node: 'pack', version: '1.0.0' })))
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409])
    for (const r of results.filter((r) => r.status === 409)) {
      expect(r.body).toEqual({ error: 'version_exists', message: 'The node version already exists' })
    }
  })

  test('parallel first publishes of ids differing in case: one node, the others 409 node_exists', async () => {
    const { pat } = await aliceWithPublisher(t)
    const ids = ['pack', 'Pack', 'PACK', 'pAck']
    const results = await Promise.all(ids.map((node) => publish(t, { pat, node, version: '1.0.0' })))
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409])
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.error).toBe('node_exists')
  })

  test.each([
    ['no version', { node_version: {} }, 'body.node_version.version: is required'],
    ['no node_version', {}, 'body.node_version: is required'],
    ['a version that is not semver', { node_version: { version: 'latest' } }, 'not a semantic version'],
    [
      'dependencies as a string',
      { node_version: { version: '1.0.0', dependencies: 'numpy' } },
      'body.node_version.dependencies: must be a list of strings',
    ],
    ['node.id unlike the path', { node: { id: 'other' }, node_version: { version: '1.0.0' } }, 'must equal the node id of the path'],
    [
      'a long description',
      { node: { description: 'x'.repeat(1001) }, node_version: { version: '1.0.0' } },
      'body.node.description: must be at most 1000 characters',
    ],
  ])('refuses %s with 400', async (_, body, message) => {
    const { pat } = await aliceWithPublisher(t)
    const res = await t.call('POST', '/publishers/acme/nodes/pack/versions', { body: { personal_access_token: pat, ...body } })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(message)
  })

  test('refuses an invalid node id on first publish', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: '-bad-', version: '1.0.0', nodeFields: { id: '-bad-' } })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_node_id')
  })
})

describe('signed upload PUT', () => {
  test('answers exactly 200, activates the version and extracts host nodes', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const up = await upload(t, res.body.signedUrl)
    expect(up.status).toBe(200)
    expect(up.body.node_version).toMatchObject({
      status: 'NodeVersionStatusActive',
      host_node_extract_status: 'success',
      downloadUrl: `${PUBLIC_URL}/archives/acme/pack/1.0.0/node.zip`,
    })
    const hostNodes = await t.call('GET', '/nodes/pack/versions/1.0.0/host-nodes')
    expect(hostNodes.body).toEqual({ node_id: 'pack', version: '1.0.0', host_nodes: ['ImageBlur', 'ImageSharpen'] })
  })

  test('claims its version in a write turn: not while a download batch is in hand', async () => {
    // Turns are SQLite's (services/write-turn.ts); PostgreSQL runs writes side by side.
    await t.cleanup()
    t = await makeTestApp({ local: true })
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const claims = async () => (await t.deps.db.selectFrom('upload_claims').select('version_id').execute()).length
    const turn = await holdWriteTurn(t.deps)
    const uploaded = upload(t, res.body.signedUrl)
    await settled()
    expect(await claims()).toBe(0)
    await turn.release()
    expect((await uploaded).status).toBe(200)
    expect(await claims()).toBe(1)
  })

  test('accepts a tar.gz', async () => {
    const { pat } = await aliceWithPublisher(t)
    const v = await publishActive(t, { pat, node: 'pack', version: '1.0.0', bytes: makeTarGz(samplePack()) })
    expect(v.status).toBe('NodeVersionStatusActive')
  })

  test('an unsafe archive flags the version with a reason', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const up = await upload(t, res.body.signedUrl, makeZip([...samplePack(), { name: '../evil', data: 'x' }]))
    expect(up.status).toBe(200)
    expect(up.body.node_version).toMatchObject({ status: 'NodeVersionStatusFlagged', host_node_extract_status: 'failed' })
    expect(up.body.node_version.status_reason).toContain('unsafe path')
  })

  test('with auto-approve off a valid upload stays pending', async () => {
    await t.cleanup()
    t = await makeTestApp({ settings: { autoApprove: false } })
    const { pat } = await aliceWithPublisher(t)
    expect((await publishActive(t, { pat, node: 'pack', version: '1.0.0' })).status).toBe('NodeVersionStatusPending')
  })

  test('accepts exactly one PUT', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await upload(t, res.body.signedUrl)).status).toBe(200)
    const second = await upload(t, res.body.signedUrl)
    expect(second.status).toBe(409)
    expect(second.body.error).toBe('archive_exists')
  })

  test.each([
    ['a tampered path', (u: URL) => (u.pathname = u.pathname.replace('1.0.0', '1.0.1'))],
    ['a tampered expiry', (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 60))],
    ['the same expiry with a plus sign', (u: URL) => u.searchParams.set('expires', `+${u.searchParams.get('expires')}`)],
    ['the same expiry with a leading zero', (u: URL) => u.searchParams.set('expires', `0${u.searchParams.get('expires')}`)],
    ['the same expiry as a decimal', (u: URL) => u.searchParams.set('expires', `${u.searchParams.get('expires')}.0`)],
    ['a tampered signature', (u: URL) => u.searchParams.set('signature', 'a'.repeat(64))],
    ['no signature', (u: URL) => u.searchParams.delete('signature')],
    ['an added parameter', (u: URL) => (u.search += '&x=1')],
    ['an added parameter with no value', (u: URL) => (u.search += '&x')],
    ['a repeated expiry', (u: URL) => u.searchParams.append('expires', u.searchParams.get('expires')!)],
    ['a repeated signature', (u: URL) => u.searchParams.append('signature', u.searchParams.get('signature')!)],
  ])('refuses %s with 403 and stores nothing', async (_, tamper) => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.1' })
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const url = new URL(res.body.signedUrl)
    tamper(url)
    const up = await upload(t, url.toString())
    expect(up.status).toBe(403)
    expect(up.body.error).toBe('invalid_signature')
    // The URL as signed still works: the refusal claimed nothing.
    expect((await upload(t, res.body.signedUrl)).status).toBe(200)
  })

  test('refuses a wrong content type, a wrong method and an expired URL with 403', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const type = await upload(t, res.body.signedUrl, makeZip(samplePack()), 'application/octet-stream')
    expect(type).toMatchObject({ status: 403, body: { message: 'this signed URL requires Content-Type: application/zip' } })
    const post = await t.app.request(res.body.signedUrl, { method: 'POST', headers: { 'content-type': 'application/zip' }, body: 'x' })
    expect(post.status).toBe(403)
    t.clock.now = new Date(t.clock.now.getTime() + 16 * 60_000)
    expect(await upload(t, res.body.signedUrl)).toMatchObject({ status: 403, body: { error: 'signature_expired' } })
  })

  test('refuses an oversize archive with 413 and stores nothing', async () => {
    await t.cleanup()
    t = await makeTestApp({ settings: { maxUploadBytes: 1000 } })
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const big = makeZip([{ name: 'big.bin', data: crypto.getRandomValues(new Uint8Array(4000)) }])
    const stream = new Blob([big]).stream() // no Content-Length: the cap must hold while streaming
    const up = await t.app.request(res.body.signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: stream })
    expect(up.status).toBe(413)
    expect(((await up.json()) as { error: string }).error).toBe('payload_too_large')
    expect([...new Bun.Glob('**/*').scanSync(t.dir)].filter((f) => !f.startsWith('tmp/') || f.endsWith('.part'))).toEqual([])
    expect((await upload(t, res.body.signedUrl)).status).toBe(200)
  })
})

describe('PUT /publishers/{p}/nodes/{n}/versions/{versionId}', () => {
  test('updates changelog and deprecated, returns the full version', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const v = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const res = await t.call('PUT', `/publishers/acme/nodes/pack/versions/${v.id}`, {
      token,
      body: { changelog: 'better', deprecated: true, status: 'NodeVersionStatusBanned' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: v.id, version: '1.0.0', changelog: 'better', deprecated: true, status: 'NodeVersionStatusActive' })
    expect(res.body.downloadUrl).toEndWith('/node.zip')
  })

  test('404 for a malformed, unknown or foreign version id; 401/403 for callers', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const v = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await publish(t, { pat, node: 'other', version: '1.0.0' })
    for (const [node, id] of [
      ['pack', 'not-a-uuid'],
      ['pack', crypto.randomUUID()],
      ['other', v.id],
    ]) {
      expect((await t.call('PUT', `/publishers/acme/nodes/${node}/versions/${id}`, { token, body: { deprecated: true } })).status).toBe(404)
    }
    expect((await t.call('PUT', `/publishers/acme/nodes/pack/versions/${v.id}`, { body: { deprecated: true } })).status).toBe(401)
    const bob = await addUser(t, 'bob')
    expect((await t.call('PUT', `/publishers/acme/nodes/pack/versions/${v.id}`, { token: bob, body: { deprecated: true } })).status).toBe(
      403,
    )
    expect((await t.call('PUT', `/publishers/acme/nodes/pack/versions/${v.id}`, { token, body: { deprecated: 'yes' } })).status).toBe(400)
  })
})
