import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { commitWrite } from '../../src/services/changes'
import { makeZip } from '../support/archives'
import { addUser, aliceWithPublisher, makeTestApp, publish, publishActive, upload, type TestApp } from '../support/app'
import { namesTable, watchQueries } from '../support/watch-queries'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

describe('GET /nodes/{id}', () => {
  test('returns strings for the fields clients require, publisher without emails, latest_version', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0', nodeFields: { description: null } })
    const res = await t.call('GET', '/nodes/pack')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: 'pack', name: 'pack', description: '', author: '', downloads: 0, rating: 0, tags: [] })
    expect(res.body.publisher).toMatchObject({ id: 'acme', name: 'acme name' })
    expect(res.body.publisher.members[0].user).toEqual({ id: 'alice', name: 'ALICE' })
    expect(res.body.latest_version).toMatchObject({ version: '1.0.0', status: 'NodeVersionStatusActive' })
    expect(res.body.latest_version.id).toBeString()
  })

  test('finds a node ignoring case, 404 for an unknown one', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'MyPack', version: '1.0.0' })
    expect((await t.call('GET', '/nodes/mypack')).body.id).toBe('MyPack')
    const missing = await t.call('GET', '/nodes/nope')
    expect(missing).toMatchObject({ status: 404, body: { error: 'not_found', message: 'node "nope" not found' } })
  })

  test('latest_version is the highest active version; pending only when none is active', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '0.9.0' })
    expect((await t.call('GET', '/nodes/pack')).body.latest_version.version).toBe('0.9.0')
    await publishActive(t, { pat, node: 'pack', version: '1.10.0' })
    await publishActive(t, { pat, node: 'pack', version: '1.9.0' })
    await publish(t, { pat, node: 'pack', version: '2.0.0' })
    expect((await t.call('GET', '/nodes/pack')).body.latest_version.version).toBe('1.10.0')
  })
})

describe('GET /nodes/{id}/versions', () => {
  test('lists versions newest first; statuses filter with repeated keys; reasons on request', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const flagged = await publish(t, { pat, node: 'pack', version: '1.1.0' })
    await upload(t, flagged.body.signedUrl, new TextEncoder().encode('not a zip'))
    await publish(t, { pat, node: 'pack', version: '1.2.0' })
    const all = await t.call('GET', '/nodes/pack/versions')
    expect(all.body.map((v: { version: string }) => v.version)).toEqual(['1.2.0', '1.1.0', '1.0.0'])
    expect(all.body[1].status_reason).toBe('')
    const some = await t.call(
      'GET',
      '/nodes/pack/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusFlagged&include_status_reason=true',
    )
    expect(some.body.map((v: { status: string }) => v.status)).toEqual(['NodeVersionStatusFlagged', 'NodeVersionStatusActive'])
    expect(some.body[0].status_reason).toBe('invalid archive: not a zip or tar.gz archive')
    expect(some.body[1].downloadUrl).toEndWith('/archives/acme/pack/1.0.0/node.zip')
    expect((await t.call('GET', '/nodes/pack/versions?statuses=Bogus')).status).toBe(400)
    expect((await t.call('GET', '/nodes/nope/versions')).status).toBe(404)
  })

  test('GET /nodes/{id}/versions/{version} reads one version by its semver', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await t.call('GET', '/nodes/pack/versions/1.0.0')).body.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/pack/versions/v1.0')).body.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/pack/versions/9.9.9')).status).toBe(404)
  })
})

describe('GET /nodes/{id}/install', () => {
  test('returns the latest installable version with a downloadUrl and counts downloads', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await publish(t, { pat, node: 'pack', version: '2.0.0' }) // never uploaded
    const res = await t.call('GET', '/nodes/pack/install')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ version: '1.0.0', downloadUrl: 'http://registry.test/archives/acme/pack/1.0.0/node.zip' })
    expect(res.body.id).toBeString()
    await t.call('GET', '/nodes/pack/install?version=1.0.0')
    await t.deps.downloads.flush()
    expect((await t.call('GET', '/nodes/pack')).body.downloads).toBe(2)
  })

  test('an install without a version passes over a latest version that has no archive here', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await publishActive(t, { pat, node: 'pack', version: '1.1.0' })
    // As a mirrored version whose archive was refused is: active, the node's latest, and nothing to download here.
    const newest = await t.deps.db.selectFrom('node_versions').select('id').where('version', '=', '1.1.0').executeTakeFirstOrThrow()
    await t.deps.db.deleteFrom('archives').where('version_id', '=', newest.id).execute()
    expect((await t.call('GET', '/nodes/pack')).body.latest_version.version).toBe('1.1.0')
    expect((await t.call('GET', '/nodes/PACK/install')).body).toMatchObject({ version: '1.0.0' })
  })

  test('404 for an unknown node or version, or one without an archive', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await t.call('GET', '/nodes/nope/install')).status).toBe(404)
    expect((await t.call('GET', '/nodes/pack/install')).status).toBe(404)
    expect((await t.call('GET', '/nodes/pack/install?version=1.0.0')).body.message).toContain('has no archive yet')
    expect((await t.call('GET', '/nodes/pack/install?version=3.0.0')).status).toBe(404)
    await t.deps.downloads.flush()
    expect((await t.call('GET', '/nodes/pack')).body.downloads).toBe(0)
  })
})

describe('POST /bulk/nodes/versions', () => {
  test('answers each identifier with success or not_found', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const res = await t.call('POST', '/bulk/nodes/versions', {
      body: {
        node_versions: [
          { node_id: 'pack', version: '1.0.0' },
          { node_id: 'pack', version: '9.0.0' },
          { node_id: 'ghost', version: '1.0.0' },
        ],
      },
    })
    expect(res.status).toBe(200)
    const [found, noVersion, noNode] = res.body.node_versions
    expect(found).toMatchObject({
      identifier: { node_id: 'pack', version: '1.0.0' },
      status: 'success',
      node_version: { version: '1.0.0' },
    })
    expect(noVersion).toMatchObject({ status: 'not_found', error_message: expect.any(String) })
    expect(noNode.status).toBe('not_found')
    expect((await t.call('POST', '/bulk/nodes/versions', { body: { node_versions: 'x' } })).status).toBe(400)
  })

  test('reads all items in a few statements, each answered as alone; a store fault is "lookup failed" for each', async () => {
    const { pat } = await aliceWithPublisher(t)
    for (const node of ['pack', 'other', 'banned-pack']) await publishActive(t, { pat, node, version: '1.0.0' })
    await commitWrite(t.deps, async (w) => {
      await w.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'banned-pack').execute()
      w.node('banned-pack')
    })
    const items = [
      { node_id: 'PACK', version: 'v1.0.0' },
      { node_id: 'other', version: '1.0' },
      { node_id: 'banned-pack', version: '1.0.0' },
      { node_id: 'pack', version: '2.0.0' },
      { node_id: 'ghost', version: '1.0.0' },
      ...Array.from({ length: 40 }, (_, i) => ({ node_id: i % 2 ? 'pack' : 'other', version: `1.0.${i % 3}` })),
    ]
    const alone = await Promise.all(items.map((item) => t.call('GET', `/nodes/${item.node_id}/versions/${item.version}`)))
    let versionReads = 0
    const db = t.deps.db
    t.deps.db = watchQueries(db, (query) => {
      if (namesTable(query, 'node_versions')) versionReads++
    })
    const { node_versions: answers } = (await t.call('POST', '/bulk/nodes/versions', { body: { node_versions: items } })).body
    expect(versionReads).toBeLessThanOrEqual(2)
    expect(answers.map((a: any) => a.status)).toEqual(
      alone.map((r) => (r.status === 200 ? 'success' : r.status === 404 ? 'not_found' : 'error')),
    )
    answers.forEach((a: any, i: number) => {
      expect(a.identifier).toEqual(items[i])
      if (a.status === 'success') expect(a.node_version).toEqual(alone[i]!.body)
      else expect(a.error_message).toBe(alone[i]!.body.message)
    })
    expect(answers.slice(0, 5).map((a: any) => a.status)).toEqual(['success', 'success', 'error', 'not_found', 'not_found'])

    t.deps.db = watchQueries(db, (query) => {
      if (namesTable(query, 'node_versions')) throw new Error('disk I/O error at /secret/path')
    })
    const failed = (await t.call('POST', '/bulk/nodes/versions', { body: { node_versions: items.slice(0, 3) } })).body
    expect(failed.node_versions.map((a: any) => [a.status, a.error_message])).toEqual(Array(3).fill(['error', 'lookup failed']))
    expect(JSON.stringify(failed)).not.toContain('secret')
    expect(t.logs.some((line) => line.includes('bulk.lookup_failed'))).toBe(true)
    t.deps.db = db
  })
})

describe('POST /nodes/{id}/reviews', () => {
  test('star 1..5; one review per user, a second replaces the first; rating is the mean', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const bob = await addUser(t, 'bob')
    const carol = await addUser(t, 'carol')
    expect((await t.call('POST', '/nodes/pack/reviews?star=5', { token: bob })).body.rating).toBe(5)
    expect((await t.call('POST', '/nodes/pack/reviews?star=2', { token: carol })).body.rating).toBe(3.5)
    const replaced = await t.call('POST', '/nodes/pack/reviews?star=4', { token: bob })
    expect(replaced).toMatchObject({ status: 200, body: { id: 'pack', rating: 3 } })
  })

  // Guards the row lock in the PostgreSQL pass of .ci/run; on SQLite writes take turns and it holds either way.
  test('reviews sent at once keep one review per reviewer and totals that match the reviews (PostgreSQL runs them side by side)', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const bob = await addUser(t, 'bob')
    const carol = await addUser(t, 'carol')
    // A double click, three times over, by two users: first reviews racing each other, then replacements.
    for (const stars of [
      [1, 2, 3, 4, 5, 1],
      [5, 4, 3, 2, 1, 5],
      [3, 3, 2, 2, 4, 4],
    ]) {
      const sent = await Promise.all(
        stars.map((star, i) => t.call('POST', `/nodes/pack/reviews?star=${star}`, { token: i % 2 ? bob : carol })),
      )
      expect(sent.map((r) => r.status)).toEqual(stars.map(() => 200))
    }
    const reviews = await t.deps.db.selectFrom('reviews').select('star').where('node_id', '=', 'pack').execute()
    const node = await t.deps.db
      .selectFrom('nodes')
      .select(['star_total', 'review_count'])
      .where('id', '=', 'pack')
      .executeTakeFirstOrThrow()
    expect(reviews).toHaveLength(2)
    expect(node).toEqual({ star_total: reviews[0]!.star + reviews[1]!.star, review_count: 2 })
  })

  test('anonymous reviews count once per client address', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    await t.call('POST', '/nodes/pack/reviews?star=1')
    expect((await t.call('POST', '/nodes/pack/reviews?star=3')).body.rating).toBe(3)
  })

  test.each(['star=0', 'star=6', 'star=2.5', 'star=x', ''])('refuses %p with 400', async (query) => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const res = await t.call('POST', `/nodes/pack/reviews?${query}`)
    expect(res.status).toBe(400)
    expect(res.body.message).toStartWith('star:')
  })

  test('404 for an unknown node; 401 when the operator requires authentication', async () => {
    expect((await t.call('POST', '/nodes/ghost/reviews?star=3')).status).toBe(404)
    await t.cleanup()
    t = await makeTestApp({ settings: { requireReviewAuth: true } })
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await t.call('POST', '/nodes/pack/reviews?star=3')).status).toBe(401)
  })
})

describe('GET /nodes and /nodes/search (paging)', () => {
  test('page shape, default limit 10, clamp at 100, page past the end, bad values', async () => {
    const { pat } = await aliceWithPublisher(t)
    for (let i = 0; i < 12; i++) await publish(t, { pat, node: `pack-${String(i).padStart(2, '0')}`, version: '1.0.0' })
    const first = await t.call('GET', '/nodes/search')
    expect(first.body).toMatchObject({ page: 1, limit: 10, total: 12, totalPages: 2 })
    expect(first.body.nodes).toHaveLength(10)
    expect((await t.call('GET', '/nodes?limit=500')).body).toMatchObject({ limit: 100, totalPages: 1 })
    expect((await t.call('GET', '/nodes?page=9&limit=5')).body).toMatchObject({ nodes: [], total: 12, totalPages: 3, page: 9 })
    for (const bad of ['page=0', 'limit=0', 'page=x', 'limit=1.5', 'include_banned=maybe']) {
      const res = await t.call('GET', `/nodes/search?${bad}`)
      expect(res.status).toBe(400)
      expect(res.body.message).toContain(bad.split('=')[0])
    }
  })

  test('GET /nodes takes repeated node_id and a changed-since timestamp', async () => {
    const { pat } = await aliceWithPublisher(t)
    for (const id of ['a', 'b', 'c']) await publish(t, { pat, node: id, version: '1.0.0' })
    const some = await t.call('GET', '/nodes?node_id=a&node_id=C')
    expect(some.body.nodes.map((n: { id: string }) => n.id).sort()).toEqual(['a', 'c'])
    t.clock.now = new Date('2026-03-01T00:00:00.000Z')
    await publish(t, { pat, node: 'b', version: '2.0.0' })
    const changed = await t.call('GET', '/nodes?timestamp=2026-02-01T00:00:00Z')
    expect(changed.body.nodes.map((n: { id: string }) => n.id)).toEqual(['b'])
    // A date alone and a time without a zone are UTC, whatever the server's zone.
    expect((await t.call('GET', '/nodes?timestamp=2026-02-01')).body.nodes.map((n: { id: string }) => n.id)).toEqual(['b'])
    expect((await t.call('GET', '/nodes?timestamp=2026-03-01T00:00:00')).body.nodes).toEqual([])
    for (const bad of ['yesterday', '0', '1 March 2026', '2026-02-30', '2026-02-01T00:00:00Z&timestamp=2026-02-02']) {
      const res = await t.call('GET', `/nodes?timestamp=${bad}`)
      expect(res.status).toBe(400)
      expect(res.body.message).toStartWith('timestamp: ')
    }
    expect((await t.call('GET', '/nodes?comfyui_version=1.0&form_factor=desktop-win')).status).toBe(200)
  })
})

describe('GET /publishers/{id}/nodes', () => {
  test('lists the publisher’s nodes', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'b', version: '1.0.0' })
    await publish(t, { pat, node: 'a', version: '1.0.0' })
    const res = await t.call('GET', '/publishers/acme/nodes')
    expect(res.body.map((n: { id: string }) => n.id)).toEqual(['a', 'b'])
    expect((await t.call('GET', '/publishers/nope/nodes')).status).toBe(404)
  })
})

describe('archive checks end to end', () => {
  test('a zip with ../evil is flagged and is not installable as latest', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    await upload(t, res.body.signedUrl, makeZip([{ name: '../evil', data: 'x' }]))
    const node = (await t.call('GET', '/nodes/pack')).body
    expect(node.latest_version.status).toBe('NodeVersionStatusFlagged')
    expect((await t.call('GET', '/nodes/pack/install')).status).toBe(404)
    expect((await t.call('GET', '/nodes/pack/install?version=1.0.0')).body.error).toBe('version_flagged')
    expect((await t.call('GET', '/archives/acme/pack/1.0.0/node.zip')).status).toBe(403)
  })
})

describe('query parameters', () => {
  test('a repeated single parameter counts once; integers must be safe', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await t.call('GET', '/nodes/search?page=1&page=2&limit=5')).body).toMatchObject({ page: 1, limit: 5, total: 1 })
    const huge = await t.call('GET', '/nodes/search?page=99999999999999999999999')
    expect(huge.status).toBe(400)
    expect(huge.body.message).toBe('page: must be an integer below 2^53')
  })
})

describe('install answers remembered', () => {
  test('a new version, a ban or a flag shows in the next install; every install is counted', async () => {
    const { pat, token } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await t.call('GET', '/nodes/pack/install')).body.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/pack/install')).body.version).toBe('1.0.0')
    const newer = await publishActive(t, { pat, node: 'pack', version: '1.1.0' })
    expect((await t.call('GET', '/nodes/pack/install')).body.version).toBe('1.1.0')
    expect((await t.call('GET', '/nodes/pack/install?version=1.1.0')).status).toBe(200)
    const setStatus = (status: 'banned' | 'flagged') =>
      commitWrite(t.deps, async (w) => {
        await w.db.updateTable('node_versions').set({ status }).where('id', '=', newer.id).execute()
        w.version(newer.id, 'pack')
      })
    await setStatus('flagged')
    expect((await t.call('GET', '/nodes/pack/install')).body.version).toBe('1.0.0')
    expect((await t.call('GET', '/nodes/pack/install?version=1.1.0', { token })).status).toBe(200) // a member
    expect((await t.call('GET', '/nodes/pack/install?version=1.1.0')).status).toBe(403) // not remembered for all
    await setStatus('banned')
    expect((await t.call('GET', '/nodes/pack/install?version=1.1.0', { token })).status).toBe(403)
    await t.deps.downloads.flush()
    expect((await t.call('GET', '/nodes/pack')).body.downloads).toBe(6)
  })
})

describe('install answers remembered, older versions', () => {
  test('a change to a version the node does not show (nodeUnchanged) still drops the remembered answers', async () => {
    const { pat } = await aliceWithPublisher(t)
    const old = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await publishActive(t, { pat, node: 'pack', version: '1.1.0' })
    expect((await t.call('GET', '/nodes/pack/install?version=1.0.0')).status).toBe(200)
    expect((await t.app.request('/archives/acme/pack/1.0.0/node.zip')).status).toBe(200)
    await commitWrite(t.deps, async (w) => {
      await w.db.updateTable('node_versions').set({ status: 'banned' }).where('id', '=', old.id).execute()
      w.version(old.id, 'pack', { nodeUnchanged: true })
    })
    expect((await t.call('GET', '/nodes/pack/install?version=1.0.0')).status).toBe(403)
    expect((await t.app.request('/archives/acme/pack/1.0.0/node.zip')).status).toBe(403)
  })
})
