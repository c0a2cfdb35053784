/** Moderation by admins: node and publisher bans with their effects everywhere, version statuses, and the audit log. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { addUser, aliceWithPublisher, makeTestApp, publish, publishActive, upload, type TestApp } from '../support/app'
import { fillMissingDocuments } from '../../src/services/document-fill'
import { seedNodes } from '../support/seed'

let t: TestApp
let alice: string
let pat: string
let ada: string
beforeEach(async () => {
  t = await makeTestApp()
  ;({ token: alice, pat } = await aliceWithPublisher(t))
  ada = await addUser(t, 'ada', { admin: true })
})
afterEach(() => t.cleanup())

const errorOf = (res: { status: number; body: any }) => `${res.status} ${res.body?.error}`
const ids = (res: { body: any }) => (res.body.nodes as { id: string }[]).map((n) => n.id)
const post = (path: string, token = ada, body?: unknown) => t.call('POST', path, { token, body })
const statusOf = async (node: string) =>
  (await t.deps.db.selectFrom('nodes').select('status').where('id', '=', node).executeTakeFirstOrThrow()).status

/** What a banned node refuses: each route and the answer it gives while the node is banned. */
async function effects(node: string, versionId: string) {
  return {
    read: errorOf(await t.call('GET', `/nodes/${node}`)),
    versions: errorOf(await t.call('GET', `/nodes/${node}/versions`)),
    version: errorOf(await t.call('GET', `/nodes/${node}/versions/1.0.0`)),
    install: errorOf(await t.call('GET', `/nodes/${node}/install`)),
    download: errorOf(await t.call('GET', `/archives/acme/${node}/1.0.0/node.zip`)),
    publish: errorOf(await publish(t, { pat, node, version: `9.${Math.floor(Math.random() * 1e6)}.0` })),
    editVersion: errorOf(
      await t.call('PUT', `/publishers/acme/nodes/${node}/versions/${versionId}`, { token: alice, body: { deprecated: true } }),
    ),
    search: ids(await t.call('GET', '/nodes/search')).includes(node),
    searchBanned: ids(await t.call('GET', '/nodes/search?include_banned=true')).includes(node),
  }
}

const BANNED = {
  read: '403 node_banned',
  versions: '403 node_banned',
  version: '403 node_banned',
  install: '403 node_banned',
  download: '403 node_banned',
  publish: '403 node_banned',
  editVersion: '403 node_banned',
  search: false,
  searchBanned: true,
}

describe('node ban and unban', () => {
  test('a banned node is refused everywhere at once and hidden from search unless include_banned; unban restores it all', async () => {
    const v = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    // Warm every cache first: a ban must reach them at once.
    expect(ids(await t.call('GET', '/nodes/search'))).toEqual(['pack'])
    expect((await t.call('GET', '/nodes/pack')).status).toBe(200)
    expect((await post('/publishers/acme/nodes/pack/ban')).status).toBe(204)
    expect(await effects('pack', v.id)).toEqual(BANNED)
    expect((await t.call('GET', '/nodes/search?include_banned=true')).body.nodes[0].status).toBe('NodeStatusBanned')
    expect((await post('/publishers/acme/nodes/pack/unban')).status).toBe(204)
    const after = await effects('pack', v.id)
    expect(after).toMatchObject({
      read: '200 undefined',
      install: '200 undefined',
      download: '200 undefined',
      publish: '201 undefined',
      search: true,
    })
  })

  test('banning or unbanning twice changes nothing more; each real change is audited with its reason', async () => {
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    await post('/publishers/acme/nodes/pack/ban', ada, { reason: 'spam' })
    await post('/publishers/acme/nodes/pack/ban')
    await post('/publishers/acme/nodes/pack/unban')
    await post('/publishers/acme/nodes/pack/unban')
    const rows = await t.deps.db.selectFrom('audit_log').selectAll().where('target_kind', '=', 'node').orderBy('id').execute()
    expect(rows.map((r) => [r.action, r.actor_id, JSON.parse(r.after_json!)])).toEqual([
      ['node.ban', 'ada', { status: 'banned', reason: 'spam' }],
      ['node.unban', 'ada', { status: 'active' }],
    ])
  })

  test('403 for anyone but an admin; 404 for an unknown publisher or node, or a node of another publisher', async () => {
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    expect(await post('/publishers/acme/nodes/pack/ban', alice)).toMatchObject({
      status: 403,
      body: { error: 'not_admin', message: 'User is not admin' },
    })
    expect(errorOf(await t.call('POST', '/publishers/acme/nodes/pack/ban'))).toBe('401 unauthorized')
    expect(errorOf(await post('/publishers/nope/nodes/pack/ban'))).toBe('404 not_found')
    expect(errorOf(await post('/publishers/acme/nodes/nope/ban'))).toBe('404 not_found')
    await t.call('POST', '/publishers', { token: ada, body: { id: 'other', name: 'Other' } })
    expect(errorOf(await post('/publishers/other/nodes/pack/ban'))).toBe('404 not_found')
    expect(await statusOf('pack')).toBe('active')
  })
})

describe('publisher ban and unban', () => {
  test('bans the publisher and its active nodes in one go: nothing publishes, nothing shows; its owner can still sign in', async () => {
    await publishActive(t, { pat, node: 'one', version: '1.0.0' })
    await publishActive(t, { pat, node: 'two', version: '1.0.0' })
    expect(ids(await t.call('GET', '/nodes/search'))).toEqual(['one', 'two'])
    expect((await post('/publishers/acme/ban')).status).toBe(204)
    expect(ids(await t.call('GET', '/nodes/search'))).toEqual([])
    expect(errorOf(await t.call('GET', '/nodes/one'))).toBe('403 node_banned')
    expect(errorOf(await publish(t, { pat, node: 'three', version: '1.0.0' }))).toBe('403 node_banned')
    expect(errorOf(await t.call('PUT', '/publishers/acme', { token: alice, body: { name: 'x' } }))).toBe('403 publisher_banned')
    expect((await t.call('GET', '/publishers/acme')).body.status).toBe('PublisherStatusBanned')
    expect((await t.call('GET', '/users', { token: alice })).status).toBe(200)
    const row = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'publisher.ban').executeTakeFirstOrThrow()
    expect(JSON.parse(row.after_json!)).toEqual({ status: 'banned', nodes: ['one', 'two'] })
  })

  test('unban restores exactly what the ban changed: nodes banned on their own stay banned, deleted ones stay deleted', async () => {
    for (const node of ['kept', 'own-before', 'own-during', 'gone'])
      await t.call('POST', '/publishers/acme/nodes', { token: alice, body: { id: node } })
    await t.call('DELETE', '/publishers/acme/nodes/gone', { token: alice })
    await post('/publishers/acme/nodes/own-before/ban')
    await post('/publishers/acme/ban')
    // Banned with its publisher, then an admin bans it on its own: it must stay banned.
    await post('/publishers/acme/nodes/own-during/ban')
    expect(await Promise.all(['kept', 'own-before', 'own-during', 'gone'].map(statusOf))).toEqual(['banned', 'banned', 'banned', 'deleted'])
    expect((await post('/publishers/acme/unban')).status).toBe(204)
    expect(await Promise.all(['kept', 'own-before', 'own-during', 'gone'].map(statusOf))).toEqual(['active', 'banned', 'banned', 'deleted'])
    expect(ids(await t.call('GET', '/nodes/search'))).toEqual(['kept'])
    expect((await t.call('GET', '/publishers/acme')).body.status).toBe('PublisherStatusActive')
    expect((await publish(t, { pat, node: 'kept', version: '1.0.0' })).status).toBe(201)
    const row = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'publisher.unban').executeTakeFirstOrThrow()
    expect(JSON.parse(row.after_json!)).toEqual({ status: 'active', nodes: ['kept'] })
  })

  test('a publisher of more nodes than one step changes (500) is banned and restored whole, its own bans kept', async () => {
    const count = 1_201
    const all = Array.from({ length: count }, (_, i) => `pack-${String(i).padStart(4, '0')}`)
    await seedNodes(t.deps.db, [...all.map((id) => ({ id })), { id: 'own', status: 'banned' as const }])
    await fillMissingDocuments(t.deps.db)
    await t.deps.search.nodesChanged([...all, 'own'])
    expect((await post('/publishers/acme/ban')).status).toBe(204)
    const statuses = async () => Object.groupBy(await t.deps.db.selectFrom('nodes').select(['id', 'status']).execute(), (r) => r.status)
    expect((await statuses()).banned?.length).toBe(count + 1)
    const ban = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'publisher.ban').executeTakeFirstOrThrow()
    expect(JSON.parse(ban.after_json!).nodes).toEqual(all)
    expect((await t.call('GET', '/nodes/search?limit=1')).body.total).toBe(0)
    // Documents are written a step at a time too: the last node's shows the ban.
    const last = await t.call('GET', `/nodes/search?include_banned=true&search=${all.at(-1)}&limit=1`)
    expect(last.body.nodes[0]).toMatchObject({ id: all.at(-1), status: 'NodeStatusBanned' })
    expect((await post('/publishers/acme/unban')).status).toBe(204)
    const after = await statuses()
    expect(after.active?.length).toBe(count)
    expect(after.banned?.map((r) => r.id)).toEqual(['own'])
    expect((await t.call('GET', '/nodes/search?limit=1')).body.total).toBe(count)
  })

  test('403 for anyone but an admin; 404 for an unknown publisher; a second ban changes nothing', async () => {
    expect(errorOf(await post('/publishers/acme/ban', alice))).toBe('403 not_admin')
    expect(errorOf(await post('/publishers/nope/ban'))).toBe('404 not_found')
    await post('/publishers/acme/ban')
    await post('/publishers/acme/ban')
    expect((await t.deps.db.selectFrom('audit_log').select('action').where('action', '=', 'publisher.ban').execute()).length).toBe(1)
  })
})

describe('PUT /admin/nodes/{n}/versions/{v}', () => {
  test('approves a pending upload (--auto-approve=false): it becomes latest and installable; the reason shows', async () => {
    await t.cleanup()
    t = await makeTestApp({ settings: { autoApprove: false } })
    ;({ token: alice, pat } = await aliceWithPublisher(t))
    ada = await addUser(t, 'ada', { admin: true })
    const created = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    await upload(t, created.body.signedUrl)
    expect((await t.call('GET', '/nodes/pack/install')).status).toBe(404)
    const res = await t.call('PUT', '/admin/nodes/pack/versions/v1.0', {
      token: ada,
      body: { status: 'NodeVersionStatusActive', status_reason: 'reviewed' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ version: '1.0.0', status: 'NodeVersionStatusActive', status_reason: 'reviewed' })
    expect((await t.call('GET', '/nodes/pack/install')).body.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/search')).body.nodes[0].latest_version.status).toBe('NodeVersionStatusActive')
    const row = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'version.status').executeTakeFirstOrThrow()
    expect(JSON.parse(row.before_json!)).toMatchObject({ node: 'pack', version: '1.0.0', status: 'NodeVersionStatusPending' })
    expect(JSON.parse(row.after_json!)).toEqual({ status: 'NodeVersionStatusActive', status_reason: 'reviewed' })
  })

  test('banning a version takes it out of install and latest_version; any status can be set back, the reason defaults to ""', async () => {
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await publishActive(t, { pat, node: 'pack', version: '1.1.0' })
    await t.call('PUT', '/admin/nodes/pack/versions/1.1.0', {
      token: ada,
      body: { status: 'NodeVersionStatusBanned', status_reason: 'malware' },
    })
    expect((await t.call('GET', '/nodes/pack/install')).body.version).toBe('1.0.0')
    expect(errorOf(await t.call('GET', '/nodes/pack/install?version=1.1.0'))).toBe('403 version_banned')
    const back = await t.call('PUT', '/admin/nodes/pack/versions/1.1.0', { token: ada, body: { status: 'active' } })
    expect(back.body).toMatchObject({ status: 'NodeVersionStatusActive', status_reason: '' })
    expect((await t.call('GET', '/nodes/pack')).body.latest_version.version).toBe('1.1.0')
  })

  test('403 for anyone but an admin; 404 for an unknown node or version; 400 for a status that is not one', async () => {
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const body = { status: 'NodeVersionStatusActive' }
    expect(errorOf(await t.call('PUT', '/admin/nodes/pack/versions/1.0.0', { token: alice, body }))).toBe('403 not_admin')
    expect(errorOf(await t.call('PUT', '/admin/nodes/nope/versions/1.0.0', { token: ada, body }))).toBe('404 not_found')
    expect(errorOf(await t.call('PUT', '/admin/nodes/pack/versions/2.0.0', { token: ada, body }))).toBe('404 not_found')
    const bad = await t.call('PUT', '/admin/nodes/pack/versions/1.0.0', { token: ada, body: { status: 'Approved' } })
    expect(errorOf(bad)).toBe('400 bad_request')
    expect(bad.body.message).toStartWith('body.status: must be one of NodeVersionStatusActive')
    expect(errorOf(await t.call('PUT', '/admin/nodes/pack/versions/1.0.0', { token: ada, body: {} }))).toBe('400 bad_request')
  })
})

describe('GET /admin/audit', () => {
  test('admins read who did what, newest first, paged with next/before, from a time on; never a token', async () => {
    t.clock.now = new Date('2026-03-01T00:00:00.000Z')
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    await post('/publishers/acme/nodes/pack/ban')
    t.clock.now = new Date('2026-03-02T00:00:00.000Z')
    await post('/publishers/acme/nodes/pack/unban')
    await post('/publishers/acme/ban')
    const first = await t.call('GET', '/admin/audit?limit=2', { token: ada })
    expect(first.status).toBe(200)
    expect(first.body.entries.map((e: any) => e.action)).toEqual(['publisher.ban', 'node.unban'])
    expect(first.body.entries[0]).toMatchObject({
      at: '2026-03-02T00:00:00.000Z',
      actor_id: 'ada',
      target_kind: 'publisher',
      target_id: 'acme',
      before: { status: 'active' },
      after: { status: 'banned', nodes: ['pack'] },
    })
    expect(first.body.entries[0].actor_address).toBeString()
    // Paging on with `before` visits every older entry once, down to the end.
    const seen = [...first.body.entries]
    for (let next = first.body.next; next !== null;) {
      const page = await t.call('GET', `/admin/audit?limit=2&before=${next}`, { token: ada })
      seen.push(...page.body.entries)
      next = page.body.next
    }
    expect(new Set(seen.map((e: any) => e.id)).size).toBe(seen.length)
    const made = seen.filter((e: any) => e.action !== 'user.create' && e.action !== 'access_token.create')
    expect(made.map((e: any) => e.action)).toEqual([
      'publisher.ban',
      'node.unban',
      'node.ban',
      'publisher_token.create',
      'publisher.create',
    ])
    expect(made.at(-1)).toMatchObject({ after: { owner: 'alice' } })
    const since = await t.call('GET', '/admin/audit?since=2026-03-02T00:00:00Z', { token: ada })
    expect(since.body.entries.map((e: any) => e.action)).toEqual(['publisher.ban', 'node.unban'])
    expect(JSON.stringify(seen)).not.toContain(pat)
  })

  test('403 for anyone but an admin; 400 for a bad since or limit', async () => {
    expect(errorOf(await t.call('GET', '/admin/audit', { token: alice }))).toBe('403 not_admin')
    expect(errorOf(await t.call('GET', '/admin/audit'))).toBe('401 unauthorized')
    for (const since of ['yesterday', '0', '2026-13-01'])
      expect(errorOf(await t.call('GET', `/admin/audit?since=${since}`, { token: ada }))).toBe('400 bad_request')
    expect(errorOf(await t.call('GET', '/admin/audit?limit=0', { token: ada }))).toBe('400 bad_request')
  })
})
