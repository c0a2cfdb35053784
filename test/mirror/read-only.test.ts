/** Mirrored publishers and nodes are read-only here; local ones live beside them; local moderation and claims stay. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { addPublisher, addPublisherToken, addUser, aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { serveTestApp, sync, type ServedApp } from '../support/mirror'

let upstream: ServedApp
let mirror: TestApp
let upstreamPat: string
let versionId: string
beforeEach(async () => {
  upstream = await serveTestApp()
  upstreamPat = (await aliceWithPublisher(upstream)).pat
  versionId = (await publishActive(upstream, { pat: upstreamPat, node: 'pack', version: '1.0.0' })).id
  mirror = await makeTestApp()
  await sync(mirror, upstream.url)
})
afterEach(async () => {
  await upstream.stop()
  await mirror.cleanup()
})

const READ_ONLY = '403 mirrored_read_only'

describe('writes to mirrored entities', () => {
  const routes: {
    name: string
    method: string
    path: () => string
    body?: unknown
    as: 'admin' | 'anonymous' | 'localOwner'
    expect: string
  }[] = [
    { name: 'PUT /publishers/{p}', method: 'PUT', path: () => '/publishers/acme', body: { name: 'x' }, as: 'admin', expect: READ_ONLY },
    {
      name: 'POST /publishers/{p}/tokens',
      method: 'POST',
      path: () => '/publishers/acme/tokens',
      body: { name: 'x' },
      as: 'admin',
      expect: READ_ONLY,
    },
    {
      name: 'DELETE /publishers/{p}/tokens/{id}',
      method: 'DELETE',
      path: () => '/publishers/acme/tokens/t1',
      as: 'admin',
      expect: READ_ONLY,
    },
    {
      name: 'POST /publishers/{p}/nodes/{n}/versions',
      method: 'POST',
      path: () => '/publishers/acme/nodes/pack/versions',
      body: { node_version: { version: '9.0.0' } },
      as: 'admin',
      expect: READ_ONLY,
    },
    {
      name: 'POST /publishers/{p}/nodes/{n}/versions of a new node in a mirrored publisher',
      method: 'POST',
      path: () => '/publishers/acme/nodes/brand-new/versions',
      body: { node_version: { version: '1.0.0' } },
      as: 'admin',
      expect: READ_ONLY,
    },
    {
      name: 'POST /publishers/{local}/nodes/{mirrored node}/versions',
      method: 'POST',
      path: () => '/publishers/local-pub/nodes/pack/versions',
      body: { node_version: { version: '9.0.0' } },
      as: 'localOwner',
      expect: READ_ONLY,
    },
    {
      name: 'PUT /publishers/{p}/nodes/{n}/versions/{id}',
      method: 'PUT',
      path: () => `/publishers/acme/nodes/pack/versions/${versionId}`,
      body: { deprecated: true },
      as: 'admin',
      expect: READ_ONLY,
    },
    { name: 'POST /nodes/{n}/reviews', method: 'POST', path: () => '/nodes/pack/reviews?star=5', as: 'anonymous', expect: READ_ONLY },
    {
      name: 'POST /publishers/{p}/nodes',
      method: 'POST',
      path: () => '/publishers/acme/nodes',
      body: { id: 'new-node' },
      as: 'admin',
      expect: READ_ONLY,
    },
    {
      name: 'PUT /publishers/{p}/nodes/{n}',
      method: 'PUT',
      path: () => '/publishers/acme/nodes/pack',
      body: { description: 'x' },
      as: 'admin',
      expect: READ_ONLY,
    },
    {
      name: 'DELETE /publishers/{p}/nodes/{n}',
      method: 'DELETE',
      path: () => '/publishers/acme/nodes/pack',
      as: 'admin',
      expect: READ_ONLY,
    },
    {
      name: 'DELETE /publishers/{p}/nodes/{n}/versions/{id}',
      method: 'DELETE',
      path: () => `/publishers/acme/nodes/pack/versions/${versionId}`,
      as: 'admin',
      expect: READ_ONLY,
    },
    { name: 'DELETE /publishers/{p}', method: 'DELETE', path: () => '/publishers/acme', as: 'admin', expect: READ_ONLY },
    {
      name: 'PUT /publishers/{p} by a non-admin',
      method: 'PUT',
      path: () => '/publishers/acme',
      body: { name: 'x' },
      as: 'localOwner',
      expect: '403 permission_denied',
    },
  ]
  for (const r of routes) {
    test(`${r.name} (${r.as}): ${r.expect}`, async () => {
      const admin = await addUser(mirror, 'ada', { admin: true })
      const owner = await addUser(mirror, 'uma')
      await addPublisher(mirror, owner, 'local-pub')
      const token = r.as === 'admin' ? admin : r.as === 'localOwner' ? owner : undefined
      const res = await mirror.call(r.method, r.path(), { token, body: r.body })
      expect(res.status < 300 ? String(res.status) : `${res.status} ${res.body.error}`).toBe(r.expect)
    })
  }
})

describe('local publishers beside mirrored ones', () => {
  test('publish, search and install locally; the mirrored id stays taken', async () => {
    const owner = await addUser(mirror, 'uma')
    await addPublisher(mirror, owner, 'local-pub')
    const pat = await addPublisherToken(mirror, owner, 'local-pub')
    await publishActive(mirror, { pat, publisher: 'local-pub', node: 'mine', version: '1.0.0' })
    expect((await mirror.call('GET', '/nodes?limit=10')).body.nodes.map((n: any) => n.id).sort()).toEqual(['mine', 'pack'])
    expect((await mirror.call('GET', '/nodes/mine/install')).status).toBe(200)
    expect((await mirror.call('POST', '/publishers', { token: owner, body: { id: 'acme', name: 'Mine' } })).status).toBe(409)
  })

  test('an upstream node whose id is taken by a local node is reported and skipped; the local one is untouched', async () => {
    const owner = await addUser(mirror, 'uma')
    await addPublisher(mirror, owner, 'local-pub')
    const pat = await addPublisherToken(mirror, owner, 'local-pub')
    await publishActive(mirror, { pat, publisher: 'local-pub', node: 'Mine', version: '1.0.0', nodeFields: { description: 'local' } })
    await publishActive(upstream, { pat: upstreamPat, node: 'mine', version: '5.0.0', nodeFields: { description: 'upstream' } })
    const summary = await sync(mirror, upstream.url)
    expect(summary.problems).toContainEqual({
      kind: 'node',
      id: 'mine',
      reason: 'a node "Mine" exists here (ids are unique ignoring case)',
    })
    expect(summary.problems).toContainEqual(expect.objectContaining({ kind: 'version', reason: 'its node "mine" was skipped' }))
    expect((await mirror.call('GET', '/nodes/Mine')).body).toMatchObject({ description: 'local', publisher: { id: 'local-pub' } })
  })
})

describe('moderation and claims made here stay', () => {
  test('a node banned here stays banned, and a node moved to a local publisher stays there, while upstream edits still arrive', async () => {
    const owner = await addUser(mirror, 'uma')
    await addPublisher(mirror, owner, 'local-pub')
    await mirror.deps.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'pack').execute()
    await publishActive(upstream, { pat: upstreamPat, node: 'pack', version: '2.0.0', nodeFields: { description: 'v2' } })
    await sync(mirror, upstream.url)
    const banned = (await mirror.call('GET', '/nodes/search?include_banned=true')).body.nodes[0]
    expect(banned).toMatchObject({ id: 'pack', status: 'NodeStatusBanned', description: 'v2', latest_version: { version: '2.0.0' } })

    await mirror.deps.db.updateTable('nodes').set({ status: 'active', publisher_id: 'local-pub' }).where('id', '=', 'pack').execute()
    await publishActive(upstream, { pat: upstreamPat, node: 'pack', version: '3.0.0' })
    await sync(mirror, upstream.url)
    expect((await mirror.call('GET', '/nodes/pack')).body).toMatchObject({
      publisher: { id: 'local-pub' },
      latest_version: { version: '3.0.0' },
    })
  })
})
