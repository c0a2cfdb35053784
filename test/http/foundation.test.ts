/** The foundation's guarantees: single-use signed uploads, bans after issue, flagged archives, anonymous reads, the change feed and audit rows of every write. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { makeZip, samplePack } from '../support/archives'
import { addUser, aliceWithPublisher, makeTestApp, publish, publishActive, storedBlobs, upload, type TestApp } from '../support/app'
import { writeDocuments } from '../../src/services/node-documents'
import { namesTable, watchQueries } from '../support/watch-queries'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

describe('signed uploads are single-use from the first byte', () => {
  test('30 racing PUTs: one stores the archive, the others get 409 at once, and no orphan blob is left', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const zips = Array.from({ length: 30 }, (_, i) => makeZip(samplePack([{ name: `f${i}.txt`, data: `${i}` }])))
    const results = await Promise.all(zips.map((zip) => upload(t, res.body.signedUrl, zip)))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 409)).toHaveLength(29)
    expect(await storedBlobs(t)).toHaveLength(1)
    expect(readdirSync(join(t.dir, 'tmp'))).toEqual([])
    const again = await upload(t, res.body.signedUrl)
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('archive_exists')
  })

  test('a second PUT while the first is still streaming is refused at once, before its body arrives', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: t.app.fetch })
    try {
      const url = new URL(res.body.signedUrl)
      const target = `${url.pathname}${url.search}`
      const zip = makeZip(samplePack())
      // Each PUT announces the whole archive but sends only its head; the first then waits on us.
      const head = (length: number) =>
        `PUT ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/zip\r\nContent-Length: ${length}\r\n\r\n`
      const replies: string[] = ['', '']
      const open = (i: number) =>
        Bun.connect({ hostname: '127.0.0.1', port: server.port!, socket: { data: (_s, d) => void (replies[i] += d.toString()) } })
      const first = await open(0)
      first.write(head(zip.byteLength) + new TextDecoder('latin1').decode(zip.subarray(0, 10)))
      await Bun.sleep(50)
      const second = await open(1)
      second.write(head(zip.byteLength))
      for (let i = 0; i < 100 && !replies[1]; i++) await Bun.sleep(10)
      expect(replies[1]).toStartWith('HTTP/1.1 409')
      expect(replies[1]).toContain('upload_in_progress')
      expect(replies[0]).toBe('')
      first.write(zip.subarray(10))
      for (let i = 0; i < 200 && !replies[0]!.includes('node_version'); i++) await Bun.sleep(10)
      expect(replies[0]).toStartWith('HTTP/1.1 200')
      first.end()
      second.end()
    } finally {
      server.stop(true)
    }
  })

  test('a client that disconnects mid-body is logged as an aborted request, leaves nothing, and frees the URL', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: t.app.fetch })
    try {
      const url = new URL(res.body.signedUrl)
      const socket = await Bun.connect({ hostname: '127.0.0.1', port: server.port!, socket: { data() {} } })
      socket.write(
        `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: x\r\nContent-Type: application/zip\r\nContent-Length: 100000\r\n\r\nPK\x03\x04`,
      )
      await Bun.sleep(50)
      socket.end()
      for (let i = 0; i < 100 && !t.logs.some((l) => l.includes('request.aborted')); i++) await Bun.sleep(10)
      const logged = t.logs.map((l) => JSON.parse(l))
      expect(logged.find((l) => l.event === 'request.aborted')).toMatchObject({ level: 'info', method: 'PUT' })
      expect(logged.filter((l) => l.level === 'error')).toEqual([])
      expect(readdirSync(join(t.dir, 'tmp'))).toEqual([])
      expect((await upload(t, res.body.signedUrl)).status).toBe(200)
    } finally {
      server.stop(true)
    }
  })

  test('an upload cut off by the size limit frees the URL for a retry', async () => {
    t = await (async () => {
      await t.cleanup()
      return makeTestApp({ settings: { maxUploadBytes: 2000 } })
    })()
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const big = makeZip(samplePack([{ name: 'big.bin', data: crypto.getRandomValues(new Uint8Array(5000)) }]), { deflate: false })
    expect((await upload(t, res.body.signedUrl, big)).status).toBe(413)
    expect((await upload(t, res.body.signedUrl)).status).toBe(200)
  })

  test('a ban of the node or of its publisher after the URL was issued refuses the upload', async () => {
    const { pat } = await aliceWithPublisher(t)
    const node = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    await t.deps.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'pack').execute()
    await writeDocuments(t.deps.db, ['pack']) // what a write through commitWrite does too
    expect((await upload(t, node.body.signedUrl)).body).toMatchObject({ error: 'node_banned', message: 'Node Banned' })
    const other = await publish(t, { pat, node: 'other', version: '1.0.0' })
    await t.deps.db.updateTable('publishers').set({ status: 'banned' }).where('id', '=', 'acme').execute()
    const res = await upload(t, other.body.signedUrl)
    expect(res.status).toBe(403)
    expect(res.body.error).toBe('node_banned')
    expect(await storedBlobs(t)).toEqual([])
  })
})

describe('flagged archives are never handed to installers', () => {
  test('install without a version never picks a flagged one, even when it is the highest', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const flagged = await publish(t, { pat, node: 'pack', version: '2.0.0' })
    await upload(t, flagged.body.signedUrl, makeZip([{ name: '../evil', data: 'x' }]))
    expect((await t.call('GET', '/nodes/pack/install')).body.version).toBe('1.0.0')
    const explicit = await t.call('GET', '/nodes/pack/install?version=2.0.0')
    expect(explicit.status).toBe(403)
    expect(explicit.body.error).toBe('version_flagged')
    expect(explicit.body.message).toContain('unsafe path')
  })

  test('a node whose only version is flagged has nothing to install, and its download says why', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    await upload(t, res.body.signedUrl, makeZip([{ name: '../evil', data: 'x' }]))
    expect((await t.call('GET', '/nodes/pack/install')).status).toBe(404)
    const download = await t.call('GET', '/archives/acme/pack/1.0.0/node.zip')
    expect(download.status).toBe(403)
    expect(download.body.message).toContain('invalid archive')
  })

  test('install without a version skips pending versions (awaiting an admin)', async () => {
    await t.cleanup()
    t = await makeTestApp({ settings: { autoApprove: false } })
    const { pat } = await aliceWithPublisher(t)
    const v = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    expect(v.status).toBe('NodeVersionStatusPending')
    expect((await t.call('GET', '/nodes/pack/install')).status).toBe(404)
    expect((await t.call('GET', '/nodes/pack/install?version=1.0.0')).status).toBe(200)
  })
})

describe('callers', () => {
  test('public reads answer a request with an invalid bearer token as anonymous; routes needing a user say why', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    for (const path of [
      '/nodes/search',
      '/nodes',
      '/nodes/pack',
      '/nodes/pack/versions',
      '/nodes/pack/install',
      '/publishers',
      '/publishers/acme',
    ]) {
      expect((await t.call('GET', path, { token: 'garbage' })).status).toBe(200)
      expect((await t.call('GET', path, { headers: { authorization: 'Basic abc' } })).status).toBe(200)
    }
    expect((await t.call('GET', '/archives/acme/pack/1.0.0/node.zip', { token: 'garbage' })).status).toBe(200)
    const me = await t.call('GET', '/users', { token: 'garbage' })
    expect(me).toMatchObject({ status: 401, body: { error: 'unauthorized', message: 'invalid auth token' } })
    expect(me.headers.get('www-authenticate')).toBe('Bearer')
    expect((await t.call('GET', '/users', { headers: { authorization: 'Basic abc' } })).body.message).toBe('token is not in Bearer format')
  })

  test('operations routes never resolve the caller (they answer with the store gone)', async () => {
    await t.deps.db.destroy()
    expect((await t.call('GET', '/health', { token: 'anything' })).status).toBe(200)
    expect((await t.call('GET', '/nodes/search', { token: 'anything' })).status).toBe(500)
  })

  test('a write that finds the store locked by another process past the wait: 503 database_unavailable, a warning', async () => {
    const { token } = await aliceWithPublisher(t)
    const db = t.deps.db
    // What the store throws once its wait for another connection's lock (5 s) is over.
    t.deps.db = watchQueries(db, (query) => {
      if (query.kind === 'UpdateQueryNode' && namesTable(query, 'publishers'))
        throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY', errno: 5 })
    })
    const res = await t.call('PUT', '/publishers/acme', { token, body: { name: 'Renamed' } })
    t.deps.db = db
    expect(res).toMatchObject({ status: 503, body: { error: 'database_unavailable' } })
    expect(res.headers.get('retry-after')).toBe('5')
    expect(t.logs.some((line) => line.includes('"database.unavailable"') && line.includes('database is locked'))).toBe(true)
    expect(t.logs.some((line) => line.includes('"request.failed"'))).toBe(false)
  })

  test('two creations of one publisher id at once: one 201, the other 409', async () => {
    const [a, b] = await Promise.all([addUser(t, 'a1'), addUser(t, 'b1')])
    const results = await Promise.all([a, b].map((token) => t.call('POST', '/publishers', { token, body: { id: 'same', name: 'Same' } })))
    expect(results.map((r) => r.status).sort()).toEqual([201, 409])
    expect(results.find((r) => r.status === 409)!.body).toEqual({ error: 'publisher_exists', message: 'Publisher ID already exists.' })
  })
})

describe('NUL characters (PostgreSQL cannot store them)', () => {
  test('in the address or in any text of a JSON body: a 400 naming where (on SQLite too, so that both backends hold the same)', async () => {
    const alice = await addUser(t, 'alice')
    for (const path of ['/nodes/x%00y', '/nodes/a%00/install', '/versions?nodeId=x%00', '/-/nodes/x%00y', '/nodes/search?search=a%00']) {
      const res = await t.call('GET', path)
      expect([path, res.status, res.body?.message ?? '']).toEqual([path, 400, expect.stringContaining('NUL')])
    }
    const created = await t.call('POST', '/publishers', { token: alice, body: { id: 'acme', name: 'a\u0000b' } })
    expect(created.status).toBe(400)
    expect(created.body.message).toBe('body.name: text may not hold a NUL character (\\u0000)')
    const keyed = await t.call('POST', '/publishers', { token: alice, body: { id: 'acme', ['x\u0000']: 1 } })
    expect(keyed.body.message).toContain('NUL')
    // "\\u0000" is a backslash and five characters, not a NUL.
    expect((await t.call('POST', '/publishers', { token: alice, body: { id: 'acme', name: 'a\\u0000b' } })).status).toBe(201)
  })
})

describe('every write records its change and its audit entry in the same transaction', () => {
  test('publish, upload, edit, review and publisher changes enter the change feed once per entity, newest serial last', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const version = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await t.call('POST', '/nodes/pack/reviews?star=5')
    await t.call('PUT', '/publishers/acme', { token, body: { description: 'new' } })
    const rows = await t.deps.db.selectFrom('changes').selectAll().orderBy('serial').execute()
    expect(rows.map((r) => `${r.kind}:${r.entity_id}`)).toEqual([`version:${version.id}`, 'node:pack', 'publisher:acme'])
    const serials = rows.map((r) => r.serial)
    expect(serials).toEqual([...serials].sort((x, y) => x - y))
    expect((await t.deps.db.selectFrom('registry_instance').select('last_serial').executeTakeFirstOrThrow()).last_serial).toBe(
      serials.at(-1)!,
    )
  })

  test('a write that fails records nothing', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const before = await t.deps.db.selectFrom('registry_instance').select('last_serial').executeTakeFirstOrThrow()
    expect((await publish(t, { pat, node: 'pack', version: '1.0.0' })).status).toBe(409)
    expect(await t.deps.db.selectFrom('registry_instance').select('last_serial').executeTakeFirstOrThrow()).toEqual(before)
  })

  test('user, publisher and token creation and deletion are audited, without the token', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const id = (await t.call('GET', '/publishers/acme/tokens', { token })).body[0].id
    await t.call('DELETE', `/publishers/acme/tokens/${id}`, { token })
    const rows = await t.deps.db.selectFrom('audit_log').selectAll().orderBy('id').execute()
    expect(rows.map((r) => [r.action, r.actor_id, r.target_id])).toEqual([
      ['user.create', null, 'alice'],
      ['access_token.create', null, 'alice'],
      ['publisher.create', 'alice', 'acme'],
      ['publisher_token.create', 'alice', 'acme'],
      ['publisher_token.delete', 'alice', 'acme'],
    ])
    expect(JSON.stringify(rows)).not.toContain(pat)
    expect(JSON.stringify(rows)).not.toContain(token)
  })
})

describe('wire compatibility', () => {
  test("bulk version lookups carry the upstream's spellings the host application's front end reads", async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, {
      pat,
      node: 'pack',
      version: '1.0.0',
      versionFields: { supported_comfyui_version: '>=0.3', supported_comfyui_frontend_version: '>=1.2' },
    })
    const res = await t.call('POST', '/bulk/nodes/versions', { body: { node_versions: [{ node_id: 'pack', version: '1.0.0' }] } })
    expect(res.body.node_versions[0].node_version).toMatchObject({
      supported_hostui_version: '>=0.3',
      supported_comfyui_version: '>=0.3',
      supported_comfyui_frontend_version: '>=1.2',
      comfy_node_extract_status: 'success',
    })
    const node = (await t.call('GET', '/nodes/pack')).body
    expect(node).toMatchObject({ github_stars: 0, preempted_comfy_node_names: [], supported_comfyui_version: '' })
  })
})
