/** One real instance mirrored from another over 127.0.0.1, through the change feed. */
import { afterEach, describe, expect, test } from 'bun:test'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { serveTestApp, sync, type ServedApp } from '../support/mirror'
import { writeDocuments } from '../../src/services/node-documents'

let upstream: ServedApp
let mirror: TestApp
afterEach(async () => {
  await upstream?.stop()
  await mirror?.cleanup()
})

/** A node as both registries show it, minus what is expected to differ (where downloads point, members). */
const comparable = (node: any) => {
  const { publisher, latest_version, ...rest } = node
  return { ...rest, publisher: { ...publisher, members: [] }, latest_version: latest_version && { ...latest_version, downloadUrl: '' } }
}

describe('sync from another registry-mirror', () => {
  test('copies publishers, nodes and versions exactly; a second run changes nothing', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    await publishActive(upstream, {
      pat,
      node: 'blur-pack',
      version: '1.0.0',
      nodeFields: { tags: ['image'], license: '{"file": "LICENSE"}' },
    })
    await publishActive(upstream, { pat, node: 'blur-pack', version: '1.1.0', versionFields: { changelog: 'faster' } })
    await publishActive(upstream, { pat, node: 'sharp-pack', version: '0.1.0' })
    await upstream.call('POST', '/nodes/blur-pack/reviews?star=4')
    mirror = await makeTestApp()
    const first = await sync(mirror, upstream.url)
    expect(first).toMatchObject({ kind: 'feed', complete: true, problems: [] })
    expect(first.changed).toMatchObject({ publishers: 1, nodes: 2, versions: 3 })
    for (const id of ['blur-pack', 'sharp-pack']) {
      const a = (await upstream.call('GET', `/nodes/${id}`)).body
      const b = (await mirror.call('GET', `/nodes/${id}`)).body
      expect(comparable(b)).toEqual(comparable(a))
    }
    const versionsA = (await upstream.call('GET', '/nodes/blur-pack/versions')).body
    const versionsB = (await mirror.call('GET', '/nodes/blur-pack/versions')).body
    expect(versionsB.map((v: any) => ({ ...v, downloadUrl: '' }))).toEqual(versionsA.map((v: any) => ({ ...v, downloadUrl: '' })))
    // Host node names come along, so host node search works on the mirror.
    expect((await mirror.call('GET', '/nodes/search?host_node_search=ImageBlur')).body.nodes.map((n: any) => n.id)).toEqual([
      'blur-pack',
      'sharp-pack',
    ])
    const serial = async () =>
      (await mirror.deps.db.selectFrom('registry_instance').select('last_serial').executeTakeFirstOrThrow()).last_serial
    const before = await serial()
    const second = await sync(mirror, upstream.url)
    expect(second).toMatchObject({ complete: true, changed: { publishers: 0, nodes: 0, versions: 0, removed: 0 } })
    expect(await serial()).toBe(before)
  })

  test('with archives: every active archive is fetched, pinned and served from here, with the upstream gone', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    const zip = makeZip(samplePack([{ name: 'weights.bin', data: crypto.getRandomValues(new Uint8Array(50_000)) }]))
    await publishActive(upstream, { pat, node: 'blur-pack', version: '1.0.0', bytes: zip })
    // A banned node's archive is refused upstream (403) and installable nowhere: not asked for, not a failure.
    await publishActive(upstream, { pat, node: 'banned-pack', version: '1.0.0' })
    await upstream.deps.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'banned-pack').execute()
    await writeDocuments(upstream.deps.db, ['banned-pack']) // what a write through commitWrite does too
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url, { archives: 'eager' })
    expect(summary).toMatchObject({ complete: true, problems: [], archives: { fetched: 1, bytes: zip.byteLength, refused: 0, failed: 0 } })
    await upstream.stop()
    const install = await mirror.call('GET', '/nodes/blur-pack/install')
    expect(install.body.downloadUrl).toBe('http://registry.test/archives/acme/blur-pack/1.0.0/node.zip')
    const res = await mirror.app.request('/archives/acme/blur-pack/1.0.0/node.zip')
    expect(res.status).toBe(200)
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(zip)
    expect(res.headers.get('etag')).toBe(`"${new Bun.CryptoHasher('sha256').update(zip).digest('hex')}"`)
  })

  test('archives are fetched through the address synced from, whatever public URL the upstream hands out', async () => {
    // Nothing listens on port 9: the addresses this upstream hands out (with a prefix, as behind a proxy) are unreachable.
    upstream = await serveTestApp({ publicUrl: 'http://127.0.0.1:9/registry' })
    const { pat } = await aliceWithPublisher(upstream)
    const zip = makeZip(samplePack([{ name: 'weights.bin', data: crypto.getRandomValues(new Uint8Array(20_000)) }]))
    await publishActive(upstream, { pat, node: 'blur-pack', version: '1.0.0', bytes: zip })
    expect((await upstream.call('GET', '/nodes/blur-pack/install')).body.downloadUrl).toBe(
      'http://127.0.0.1:9/registry/archives/acme/blur-pack/1.0.0/node.zip',
    )
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url, { archives: 'eager' })
    expect(summary).toMatchObject({ complete: true, archives: { fetched: 1, failed: 0 } })
    expect(upstream.requests).toContain('/archives/acme/blur-pack/1.0.0/node.zip')
    const res = await mirror.app.request('/archives/acme/blur-pack/1.0.0/node.zip')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(zip)
  })

  test('archives that cannot be fetched leave the run incomplete, its reason naming the first and why', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    await publishActive(upstream, { pat, node: 'blur-pack', version: '1.0.0' })
    await publishActive(upstream, { pat, node: 'sharp-pack', version: '1.0.0' })
    upstream.intercept = (url) => (url.pathname.startsWith('/archives/') ? new Response('broken', { status: 500 }) : undefined)
    mirror = await makeTestApp()
    const summary = await sync(mirror, upstream.url, { archives: 'eager' })
    expect(summary).toMatchObject({ complete: false, archives: { fetched: 0, failed: 2 } })
    expect(summary.reason).toMatch(
      /^2 archives could not be fetched \(the first, (blur|sharp)-pack@1\.0\.0: http:\/\/127\.0\.0\.1:\d+\/archives\/.* HTTP 500/,
    )
  })

  test('changes upstream arrive incrementally: new versions, edits, bans, deletions', async () => {
    upstream = await serveTestApp()
    const { pat, token } = await aliceWithPublisher(upstream)
    const v1 = await publishActive(upstream, { pat, node: 'blur-pack', version: '1.0.0' })
    await publishActive(upstream, { pat, node: 'sharp-pack', version: '1.0.0' })
    mirror = await makeTestApp()
    await sync(mirror, upstream.url)
    await publishActive(upstream, { pat, node: 'blur-pack', version: '2.0.0' })
    await upstream.call('PUT', `/publishers/acme/nodes/blur-pack/versions/${v1.id}`, {
      token,
      body: { deprecated: true, changelog: 'old' },
    })
    await upstream.call('PUT', '/publishers/acme', { token, body: { name: 'Acme Corp' } })
    await upstream.deps.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'sharp-pack').execute()
    await writeDocuments(upstream.deps.db, ['sharp-pack']) // what a write through commitWrite does too
    await upstream.deps.db.updateTable('changes').set({ serial: 999 }).where('entity_id', '=', 'sharp-pack').execute()
    await upstream.deps.db.updateTable('registry_instance').set({ last_serial: 999 }).execute()
    const second = await sync(mirror, upstream.url)
    expect(second).toMatchObject({ complete: true, full: false, problems: [] })
    expect((await mirror.call('GET', '/nodes/blur-pack')).body).toMatchObject({
      latest_version: { version: '2.0.0' },
      publisher: { name: 'Acme Corp' },
    })
    expect((await mirror.call('GET', '/nodes/blur-pack/versions/1.0.0')).body).toMatchObject({ deprecated: true, changelog: 'old' })
    expect((await mirror.call('GET', '/nodes/sharp-pack')).status).toBe(403)
    expect((await mirror.call('GET', '/nodes/search?include_banned=true')).body.nodes.map((n: any) => [n.id, n.status])).toContainEqual([
      'sharp-pack',
      'NodeStatusBanned',
    ])
  })

  test('an upstream reset (new instance id) means a full pass, which removes what the upstream no longer has', async () => {
    upstream = await serveTestApp()
    const { pat } = await aliceWithPublisher(upstream)
    await publishActive(upstream, { pat, node: 'blur-pack', version: '1.0.0' })
    await publishActive(upstream, { pat, node: 'sharp-pack', version: '1.0.0' })
    mirror = await makeTestApp()
    await sync(mirror, upstream.url)
    // The upstream loses sharp-pack and starts a new life.
    await upstream.deps.db.deleteFrom('changes').execute()
    await upstream.deps.db.deleteFrom('node_versions').where('node_id', '=', 'sharp-pack').execute()
    await upstream.deps.db.deleteFrom('nodes').where('id', '=', 'sharp-pack').execute()
    await upstream.deps.db.updateTable('registry_instance').set({ instance_id: crypto.randomUUID(), last_serial: 0 }).execute()
    await publishActive(upstream, { pat, node: 'blur-pack', version: '3.0.0' })
    const after = await sync(mirror, upstream.url)
    expect(after).toMatchObject({ complete: true, full: true })
    expect((await mirror.call('GET', '/nodes/sharp-pack')).status).toBe(404)
    expect((await mirror.call('GET', '/nodes/blur-pack')).body.latest_version.version).toBe('3.0.0')
    expect((await mirror.call('GET', '/nodes/blur-pack/versions/1.0.0')).status).toBe(404)
  })
})
