/** The publisher's node lifecycle: create, edit, delete nodes and versions, delete the publisher, permissions, the paged lists. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { addUser, aliceWithPublisher, makeTestApp, publish, publishActive, type TestApp } from '../support/app'

let t: TestApp
let alice: string
let pat: string
beforeEach(async () => {
  t = await makeTestApp()
  ;({ token: alice, pat } = await aliceWithPublisher(t))
})
afterEach(() => t.cleanup())

const errorOf = (res: { status: number; body: any }) => `${res.status} ${res.body?.error}`
const ids = (res: { body: any }) => (res.body.nodes as { id: string }[]).map((n) => n.id)
/** What the test did, without the accounts and tokens its setup made (they are audited too). */
const auditActions = async () =>
  (
    await t.deps.db
      .selectFrom('audit_log')
      .select('action')
      .where('action', 'not in', ['user.create', 'access_token.create'])
      .orderBy('id')
      .execute()
  ).map((r) => r.action)

describe('POST /publishers/{p}/nodes', () => {
  test('creates a node without a version: 201 with the node as reads show it, searchable at once', async () => {
    const res = await t.call('POST', '/publishers/acme/nodes', {
      token: alice,
      body: { id: 'fresh', name: 'Fresh Pack', description: 'new', license: { file: 'LICENSE' }, tags: ['x'], status: 'NodeStatusBanned' },
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      id: 'fresh',
      name: 'Fresh Pack',
      license: '{"file":"LICENSE"}',
      tags: ['x'],
      status: 'NodeStatusActive',
    })
    expect(res.body.publisher.id).toBe('acme')
    expect(res.body.latest_version).toBeUndefined()
    expect((await t.call('GET', '/nodes/fresh')).body).toEqual(res.body)
    expect(ids(await t.call('GET', '/nodes/search?search=fresh'))).toEqual(['fresh'])
  })

  test('400 for a missing or malformed id; 409 for an id taken ignoring case, by a deleted node too', async () => {
    expect(errorOf(await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { name: 'x' } }))).toBe('400 invalid_node_id')
    expect(errorOf(await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id: '-bad' } }))).toBe('400 invalid_node_id')
    await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id: 'Taken' } })
    expect(errorOf(await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id: 'taken' } }))).toBe('409 node_exists')
    await t.call('DELETE', '/publishers/acme/nodes/Taken', { token: alice })
    expect(errorOf(await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id: 'TAKEN' } }))).toBe('409 node_exists')
  })
})

describe("a node's repository", () => {
  test('must be an http(s) URL or empty, on creation, on edit and in a publish: clients clone and link it', async () => {
    const token = alice
    for (const repository of [
      'javascript:alert(1)',
      '--upload-pack=touch /tmp/x',
      'ext::sh -c touch% /tmp/x',
      'git@github.com:a/b',
      'file:///etc',
      'https://github.com/a b',
    ]) {
      const created = await t.call('POST', '/publishers/acme/nodes', { token, body: { id: 'pack', repository } })
      expect(created).toMatchObject({ status: 400, body: { message: 'body.repository: must be an http(s) URL' } })
      const published = await publish(t, { pat, node: 'pack', version: '1.0.0', nodeFields: { repository } })
      expect(published.status).toBe(400)
    }
    expect((await t.call('GET', '/nodes/pack')).status).toBe(404)
    for (const repository of ['https://github.com/a/b', 'http://git.internal/a/b', '']) {
      expect((await t.call('POST', '/publishers/acme/nodes', { token, body: { id: `ok-${repository.length}`, repository } })).status).toBe(
        201,
      )
    }
    const edit = await t.call('PUT', '/publishers/acme/nodes/ok-22', { token, body: { repository: 'javascript:alert(1)' } })
    expect(edit.status).toBe(400)
    expect((await t.call('GET', '/nodes/ok-22')).body.repository).toBe('https://github.com/a/b')
  })
})

describe('PUT /publishers/{p}/nodes/{n}', () => {
  test("applies the sent fields (what the web front end's edit form sends), shows them in reads and search at once", async () => {
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    expect(ids(await t.call('GET', '/nodes/search?search=zebra'))).toEqual([])
    const res = await t.call('PUT', '/publishers/acme/nodes/pack', {
      token: alice,
      body: { id: 'pack', name: 'Zebra Pack', description: 'stripes', license: 'MIT', repository: 'https://github.com/acme/pack' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      id: 'pack',
      name: 'Zebra Pack',
      description: 'stripes',
      license: 'MIT',
      repository: 'https://github.com/acme/pack',
    })
    expect(res.body.latest_version.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/pack')).body.name).toBe('Zebra Pack')
    expect(ids(await t.call('GET', '/nodes/search?search=zebra'))).toEqual(['pack'])
  })

  test('a different id is 400 (ids cannot change); server-owned and admin fields from a publisher are ignored', async () => {
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    expect(errorOf(await t.call('PUT', '/publishers/acme/nodes/pack', { token: alice, body: { id: 'renamed' } }))).toBe('400 bad_request')
    const res = await t.call('PUT', '/publishers/acme/nodes/pack', {
      token: alice,
      body: { id: 'PACK', status: 'NodeStatusBanned', search_ranking: 99, tags_admin: ['featured'], downloads: 1e6 },
    })
    expect(res.body).toMatchObject({ status: 'NodeStatusActive', search_ranking: 0, tags_admin: [], downloads: 0 })
  })

  test('404 for an unknown node, a deleted one, and one of another publisher through this path; 403 for a banned one', async () => {
    const bob = await addUser(t, 'bob')
    await t.call('POST', '/publishers', { token: bob, body: { id: 'bobs', name: 'Bob' } })
    await t.call('POST', '/publishers/bobs/nodes', { token: bob, body: { id: 'bobpack' } })
    await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id: 'gone' } })
    await t.call('DELETE', '/publishers/acme/nodes/gone', { token: alice })
    for (const node of ['nope', 'gone', 'bobpack']) {
      expect(errorOf(await t.call('PUT', `/publishers/acme/nodes/${node}`, { token: alice, body: { name: 'x' } }))).toBe('404 not_found')
    }
    const ada = await addUser(t, 'ada', { admin: true })
    await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id: 'spam' } })
    await t.call('POST', '/publishers/acme/nodes/spam/ban', { token: ada })
    expect(await t.call('PUT', '/publishers/acme/nodes/spam', { token: alice, body: { name: 'x' } })).toMatchObject({
      status: 403,
      body: { error: 'node_banned', message: 'Node Banned' },
    })
  })

  test("an admin may moderate through it as the front end's admin screens do: unban, re-home, rank", async () => {
    const ada = await addUser(t, 'ada', { admin: true })
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await t.call('POST', '/publishers/acme/nodes/pack/ban', { token: ada })
    const node = (await t.call('GET', '/nodes/search?include_banned=true')).body.nodes[0]
    // The front end's unban sends the whole node back with status NodeStatusActive.
    const unbanned = await t.call('PUT', '/publishers/acme/nodes/pack', { token: ada, body: { ...node, status: 'NodeStatusActive' } })
    expect(unbanned.status).toBe(200)
    expect(unbanned.body.status).toBe('NodeStatusActive')
    expect((await t.call('GET', '/nodes/pack')).status).toBe(200)
    const bob = await addUser(t, 'bob')
    await t.call('POST', '/publishers', { token: bob, body: { id: 'bobs', name: 'Bob' } })
    const moved = await t.call('PUT', '/publishers/acme/nodes/pack', { token: ada, body: { publisher: { id: 'bobs' }, search_ranking: 7 } })
    expect(moved.body).toMatchObject({ search_ranking: 7, publisher: { id: 'bobs' } })
    // A ranking past what every backend stores (a 32-bit integer on PostgreSQL) is bad input there as here, not a 500.
    for (const search_ranking of [2 ** 31, -(2 ** 31) - 1]) {
      const res = await t.call('PUT', '/publishers/bobs/nodes/pack', { token: ada, body: { search_ranking } })
      expect({ status: res.status, message: res.body.message }).toEqual({
        status: 400,
        message: 'body.search_ranking: must be an integer from -2147483648 to 2147483647',
      })
    }
    expect(errorOf(await t.call('PUT', '/publishers/bobs/nodes/pack', { token: ada, body: { publisher: { id: 'nobody' } } }))).toBe(
      '400 bad_request',
    )
    expect(await auditActions()).toEqual([
      'publisher.create',
      'publisher_token.create',
      'node.ban',
      'node.unban',
      'publisher.create',
      'node.transfer',
    ])
  })
})

describe('DELETE /publishers/{p}/nodes/{n}', () => {
  test('soft delete: 204; gone from reads, lists, search and install; the id stays taken; audited', async () => {
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    expect(ids(await t.call('GET', '/nodes/search'))).toEqual(['pack'])
    const res = await t.call('DELETE', '/publishers/acme/nodes/pack', { token: alice })
    expect(res.status).toBe(204)
    for (const path of ['/nodes/pack', '/nodes/pack/install', '/nodes/pack/versions', '/archives/acme/pack/1.0.0/node.zip']) {
      expect((await t.call('GET', path)).status).toBe(404)
    }
    expect(ids(await t.call('GET', '/nodes/search?include_banned=true'))).toEqual([])
    expect(ids(await t.call('GET', '/nodes?node_id=pack'))).toEqual([])
    expect((await t.call('GET', '/publishers/acme/nodes/v2')).body.total).toBe(0)
    expect((await t.call('GET', '/publishers/acme/nodes')).body).toEqual([])
    expect(errorOf(await publish(t, { pat, node: 'pack', version: '2.0.0' }))).toBe('409 node_deleted')
    expect(errorOf(await t.call('DELETE', '/publishers/acme/nodes/pack', { token: alice }))).toBe('404 not_found')
    const row = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'node.delete').executeTakeFirstOrThrow()
    expect(row).toMatchObject({ actor_id: 'alice', target_id: 'pack' })
    expect(JSON.parse(row.before_json!)).toEqual({ status: 'active', publisher: 'acme' })
  })

  test('a signed upload URL handed out before the deletion no longer takes an archive', async () => {
    const created = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    await t.call('DELETE', '/publishers/acme/nodes/pack', { token: alice })
    const res = await t.app.request(created.body.signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: 'x' })
    expect(res.status).toBe(404)
  })
})

describe('DELETE /publishers/{p}/nodes/{n}/versions/{id}', () => {
  test('soft delete: latest_version and install move to the next version; the version string stays taken; audited', async () => {
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const top = await publishActive(t, { pat, node: 'pack', version: '1.1.0' })
    // Warm the caches: they must not keep the deleted version as latest.
    expect((await t.call('GET', '/nodes/search')).body.nodes[0].latest_version.version).toBe('1.1.0')
    expect((await t.call('DELETE', `/publishers/acme/nodes/pack/versions/${top.id}`, { token: alice })).status).toBe(204)
    expect((await t.call('GET', '/nodes/pack')).body.latest_version.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/search')).body.nodes[0].latest_version.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/pack/install')).body.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/pack/install?version=1.1.0')).status).toBe(404)
    expect((await t.call('GET', '/nodes/pack/versions/1.1.0')).status).toBe(404)
    expect((await t.call('GET', '/nodes/pack/versions')).body.map((v: any) => v.version)).toEqual(['1.0.0'])
    expect((await t.call('GET', '/nodes/pack/versions?statuses=NodeVersionStatusDeleted')).body.map((v: any) => v.version)).toEqual([
      '1.1.0',
    ])
    expect(errorOf(await publish(t, { pat, node: 'pack', version: '1.1.0' }))).toBe('409 version_exists')
    expect(errorOf(await t.call('DELETE', `/publishers/acme/nodes/pack/versions/${top.id}`, { token: alice }))).toBe('404 not_found')
    const row = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'version.delete').executeTakeFirstOrThrow()
    expect(JSON.parse(row.before_json!)).toEqual({ node: 'pack', version: '1.1.0', status: 'active' })
  })

  test('deleting the only version leaves the node without latest_version and nothing to install', async () => {
    const only = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await t.call('DELETE', `/publishers/acme/nodes/pack/versions/${only.id}`, { token: alice })
    expect((await t.call('GET', '/nodes/pack')).body.latest_version).toBeUndefined()
    expect((await t.call('GET', '/nodes/pack/install')).status).toBe(404)
  })

  test('404 for a malformed or unknown id, or a version of another node', async () => {
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const other = (await publish(t, { pat, node: 'other', version: '1.0.0' })).body.node_version.id
    for (const id of ['not-a-uuid', crypto.randomUUID(), other]) {
      expect(errorOf(await t.call('DELETE', `/publishers/acme/nodes/pack/versions/${id}`, { token: alice }))).toBe('404 not_found')
    }
  })
})

describe('DELETE /publishers/{p}', () => {
  test('409 while it has live nodes; once they are deleted, 204 and gone; its id stays taken and its tokens stop working', async () => {
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const refused = await t.call('DELETE', '/publishers/acme', { token: alice })
    expect(refused).toMatchObject({
      status: 409,
      body: { error: 'publisher_not_empty', message: 'publisher "acme" still has 1 node: delete it first' },
    })
    await t.call('DELETE', '/publishers/acme/nodes/pack', { token: alice })
    expect((await t.call('DELETE', '/publishers/acme', { token: alice })).status).toBe(204)
    expect((await t.call('GET', '/publishers/acme')).status).toBe(404)
    expect((await t.call('GET', '/publishers')).body).toEqual([])
    expect((await t.call('GET', '/users/publishers/', { token: alice })).body).toEqual([])
    expect(errorOf(await t.call('GET', '/publishers/validate?username=acme'))).toBe('400 publisher_exists')
    expect(errorOf(await t.call('POST', '/publishers', { token: alice, body: { id: 'acme', name: 'Again' } }))).toBe('409 publisher_exists')
    expect(errorOf(await publish(t, { pat, node: 'new', version: '1.0.0' }))).toBe('404 not_found')
    expect(errorOf(await t.call('DELETE', '/publishers/acme', { token: alice }))).toBe('404 not_found')
    const row = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'publisher.delete').executeTakeFirstOrThrow()
    expect(JSON.parse(row.before_json!)).toEqual({ members: [{ user: 'alice', role: 'owner' }] })
  })

  test("a deleted publisher no longer counts toward its owner's publisher limit", async () => {
    t.deps.settings.maxPublishersPerUser = 1
    expect(errorOf(await t.call('POST', '/publishers', { token: alice, body: { id: 'second', name: 'x' } }))).toBe('403 publisher_limit')
    await t.call('DELETE', '/publishers/acme', { token: alice })
    expect((await t.call('POST', '/publishers', { token: alice, body: { id: 'second', name: 'x' } })).status).toBe(201)
  })
})

describe('permissions', () => {
  test('GET /publishers/{p}/permissions and /nodes/{n}/permissions answer canEdit; 404 for an unknown publisher', async () => {
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const uma = await addUser(t, 'uma')
    expect((await t.call('GET', '/publishers/acme/permissions', { token: alice })).body).toEqual({ canEdit: true })
    expect((await t.call('GET', '/publishers/acme/permissions', { token: uma })).body).toEqual({ canEdit: false })
    expect((await t.call('GET', '/publishers/acme/nodes/pack/permissions', { token: alice })).body).toEqual({ canEdit: true })
    expect((await t.call('GET', '/publishers/acme/nodes/nope/permissions', { token: alice })).body).toEqual({ canEdit: false })
    expect((await t.call('GET', '/publishers/acme/nodes/pack/permissions', { token: uma })).body).toEqual({ canEdit: false })
    expect(errorOf(await t.call('GET', '/publishers/nope/permissions', { token: alice }))).toBe('404 not_found')
    expect(errorOf(await t.call('GET', '/publishers/acme/permissions'))).toBe('401 unauthorized')
  })
})

describe('GET /publishers/{p}/nodes/v2', () => {
  test('pages the nodes in id order in the shape of the other lists; banned ones on request; 404 for an unknown publisher', async () => {
    for (const id of ['c', 'a', 'b']) await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id } })
    const ada = await addUser(t, 'ada', { admin: true })
    await t.call('POST', '/publishers/acme/nodes/b/ban', { token: ada })
    const page = await t.call('GET', '/publishers/acme/nodes/v2?limit=1&page=2')
    expect(page.body).toMatchObject({ page: 2, limit: 1, total: 2, totalPages: 2 })
    expect(ids(page)).toEqual(['c'])
    expect(page.body.nodes[0].publisher.id).toBe('acme')
    expect(ids(await t.call('GET', '/publishers/acme/nodes/v2?include_banned=true'))).toEqual(['a', 'b', 'c'])
    expect((await t.call('GET', '/publishers/acme/nodes/v2?limit=500')).body.limit).toBe(100)
    expect(errorOf(await t.call('GET', '/publishers/nope/nodes/v2'))).toBe('404 not_found')
  })
})

describe('GET /versions', () => {
  test('versions across nodes, newest first, paged; nodeId and statuses filter; reasons on request', async () => {
    await publishActive(t, { pat, node: 'one', version: '1.0.0' })
    t.clock.now = new Date(t.clock.now.getTime() + 1000)
    await publish(t, { pat, node: 'two', version: '1.0.0' })
    t.clock.now = new Date(t.clock.now.getTime() + 1000)
    await publishActive(t, { pat, node: 'one', version: '1.1.0' })
    const all = await t.call('GET', '/versions')
    expect(all.body).toMatchObject({ total: 3, page: 1, pageSize: 10, totalPages: 1 })
    expect(all.body.versions.map((v: any) => `${v.node_id}@${v.version}`)).toEqual(['one@1.1.0', 'two@1.0.0', 'one@1.0.0'])
    expect(all.body.versions[0].downloadUrl).toEndWith('/archives/acme/one/1.1.0/node.zip')
    const paged = await t.call('GET', '/versions?pageSize=2&page=2')
    expect(paged.body).toMatchObject({ total: 3, page: 2, pageSize: 2, totalPages: 2 })
    expect(paged.body.versions).toHaveLength(1)
    expect((await t.call('GET', '/versions?nodeId=ONE')).body.total).toBe(2)
    const pending = await t.call('GET', '/versions?statuses=NodeVersionStatusPending')
    expect(pending.body.versions.map((v: any) => v.node_id)).toEqual(['two'])
  })

  test('every page is the same page of one sort of all versions; the total follows each write; depth is bounded', async () => {
    // Versions in three statuses, most of them at the same instant (ties fall to the id), of four nodes.
    for (const [i, node] of ['a', 'b', 'c', 'd'].entries()) {
      await publishActive(t, { pat, node, version: '1.0.0' })
      await publish(t, { pat, node, version: '1.1.0' }) // pending
      if (i % 2) t.clock.now = new Date(t.clock.now.getTime() + 1000)
    }
    const ada = await addUser(t, 'ada', { admin: true })
    await t.call('POST', '/publishers/acme/nodes/d/ban', { token: ada })
    const expected = (await t.deps.db.selectFrom('node_versions').select(['id', 'node_id', 'status', 'created_at']).execute())
      .filter((v) => v.node_id !== 'd' && ['active', 'pending', 'flagged'].includes(v.status))
      .sort((x, y) => (x.created_at < y.created_at ? 1 : x.created_at > y.created_at ? -1 : x.id < y.id ? -1 : 1))
      .map((v) => v.id)
    const paged: string[] = []
    for (let page = 1; page <= 4; page++) {
      const res = await t.call('GET', `/versions?pageSize=2&page=${page}`)
      expect(res.body).toMatchObject({ total: expected.length, totalPages: 3 })
      paged.push(...res.body.versions.map((v: any) => v.id))
    }
    expect(paged).toEqual(expected)

    // The total is kept between requests, and every write moves it.
    await publish(t, { pat, node: 'e', version: '1.0.0' })
    expect((await t.call('GET', '/versions')).body.total).toBe(expected.length + 1)
    await t.call('POST', '/publishers/acme/nodes/d/unban', { token: ada })
    expect((await t.call('GET', '/versions')).body.total).toBe(expected.length + 3)

    // Across nodes, pages start within the first 10,000 versions; one node's versions at any depth.
    expect((await t.call('GET', '/versions?pageSize=1&page=10000')).body).toMatchObject({ versions: [], total: expected.length + 3 })
    expect(await t.call('GET', '/versions?pageSize=1&page=10001')).toMatchObject({
      status: 400,
      body: { error: 'bad_request', message: expect.stringContaining('versions across nodes are listed to the first 10,000') },
    })
    expect((await t.call('GET', '/versions?pageSize=100&page=100')).status).toBe(200)
    expect((await t.call('GET', '/versions?pageSize=100&page=101')).status).toBe(400)
    expect((await t.call('GET', '/versions?nodeId=a&pageSize=100&page=5000')).body).toMatchObject({ versions: [], total: 2 })
  })

  test('pageSize above 100 is 400 with the upstream message', async () => {
    expect(await t.call('GET', '/versions?pageSize=101')).toMatchObject({
      status: 400,
      body: { error: 'bad_request', message: 'Invalid pageSize: 101. The maximum allowed is 100.' },
    })
    expect((await t.call('GET', '/versions?pageSize=100')).status).toBe(200)
    expect((await t.call('GET', '/versions?page=0')).status).toBe(400)
  })

  test('versions of banned nodes: admins only (403 Node Banned when one is asked for); deleted nodes never', async () => {
    await publish(t, { pat, node: 'spam', version: '1.0.0' })
    await publish(t, { pat, node: 'gone', version: '1.0.0' })
    await t.call('DELETE', '/publishers/acme/nodes/gone', { token: alice })
    const ada = await addUser(t, 'ada', { admin: true })
    await t.call('POST', '/publishers/acme/nodes/spam/ban', { token: ada })
    expect((await t.call('GET', '/versions')).body.total).toBe(0)
    expect(errorOf(await t.call('GET', '/versions?nodeId=spam', { token: alice }))).toBe('403 node_banned')
    expect((await t.call('GET', '/versions', { token: ada })).body.versions.map((v: any) => v.node_id)).toEqual(['spam'])
  })
})
