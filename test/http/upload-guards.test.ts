/**
 * The signed upload's checks at their edges, each found untested by breaking it (a hand-made mutant survived the
 * suite): the expiry instant, the Content-Length cap, a version deleted or moderated after its URL was issued, a
 * ban while the bytes stream, a URL signed for no version, and the spellings of a signature.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { makeZip, samplePack } from '../support/archives'
import { addUser, aliceWithPublisher, makeTestApp, publish, storedBlobs, upload, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

const expiresOf = (signedUrl: string) => Number(new URL(signedUrl).searchParams.get('expires'))

/** A body that counts the reads the server asks of it (nothing is read before the first one: highWaterMark 0). */
function countedBody(bytes: Uint8Array) {
  const reads = { count: 0 }
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        reads.count++
        controller.enqueue(bytes)
        controller.close()
      },
    },
    { highWaterMark: 0 },
  )
  return { body, reads }
}

async function putRaw(signedUrl: string, init: { headers?: Record<string, string>; body: RequestInit['body'] }) {
  const res = await t.app.request(signedUrl, {
    method: 'PUT',
    headers: { 'content-type': 'application/zip', ...init.headers },
    body: init.body,
    duplex: 'half',
  } as RequestInit)
  return { status: res.status, body: (await res.json()) as any }
}

describe('the signed URL expires 15 minutes after the publish, to the millisecond', () => {
  test('refused one millisecond after its expiry, accepted at the expiry itself', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const expires = expiresOf(res.body.signedUrl)
    expect(expires).toBe(Math.floor(t.clock.now.getTime() / 1000) + 15 * 60)
    t.clock.now = new Date(expires * 1000 + 1)
    expect(await upload(t, res.body.signedUrl)).toMatchObject({ status: 403, body: { error: 'signature_expired' } })
    t.clock.now = new Date(expires * 1000)
    expect((await upload(t, res.body.signedUrl)).status).toBe(200)
  })
})

describe('the upload cap', () => {
  test('an archive of exactly the limit is accepted, its Content-Length too', async () => {
    const zip = makeZip(samplePack())
    t.deps.settings.maxUploadBytes = zip.length
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await putRaw(res.body.signedUrl, { headers: { 'content-length': String(zip.length) }, body: zip })).status).toBe(200)
  })

  test('a Content-Length above the limit is refused with 413 before a byte of the body is read, and claims nothing', async () => {
    const zip = makeZip(samplePack())
    t.deps.settings.maxUploadBytes = zip.length - 1
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const { body, reads } = countedBody(zip)
    const refused = await putRaw(res.body.signedUrl, { headers: { 'content-length': String(zip.length) }, body })
    expect(refused).toMatchObject({ status: 413, body: { error: 'payload_too_large' } })
    expect(reads.count).toBe(0)
    t.deps.settings.maxUploadBytes = zip.length
    expect((await upload(t, res.body.signedUrl, zip)).status).toBe(200)
  })
})

describe('what happened to the version after its URL was issued', () => {
  test('a deleted version takes no archive (404), though its node lives on', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const gone = await t.call('DELETE', `/publishers/acme/nodes/pack/versions/${res.body.node_version.id}`, { token })
    expect(gone.status).toBe(204)
    expect(await upload(t, res.body.signedUrl)).toMatchObject({ status: 404, body: { error: 'not_found' } })
    expect((await t.call('GET', '/nodes/pack')).status).toBe(200)
    expect(await storedBlobs(t)).toEqual([])
  })

  test('a version an admin banned before the upload stays banned: the upload does not make it active', async () => {
    const admin = await addUser(t, 'ada', { admin: true })
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const ban = await t.call('PUT', '/admin/nodes/pack/versions/1.0.0', {
      token: admin,
      body: { status: 'NodeVersionStatusBanned', status_reason: 'malware' },
    })
    expect(ban.status).toBe(200)
    const up = await upload(t, res.body.signedUrl)
    expect(up.status).toBe(200)
    expect(up.body.node_version.status).toBe('NodeVersionStatusBanned')
    expect((await t.call('GET', '/nodes/pack/install?version=1.0.0')).body.error).toBe('version_banned')
  })

  test('a node banned while its archive streams in is refused when the upload would commit: nothing is stored', async () => {
    const admin = await addUser(t, 'ada', { admin: true })
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const zip = makeZip(samplePack())
    const { promise: started, resolve: streaming } = Promise.withResolvers<void>()
    const { promise: banned, resolve: finish } = Promise.withResolvers<void>()
    let part = 0
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (part++ === 0) {
            // The server has checked the URL, the node and the claim, and reads the bytes: now the ban comes.
            controller.enqueue(zip.subarray(0, 100))
            streaming()
            return
          }
          await banned
          controller.enqueue(zip.subarray(100))
          controller.close()
        },
      },
      { highWaterMark: 0 },
    )
    const put = putRaw(res.body.signedUrl, { body })
    await started
    expect((await t.call('POST', '/publishers/acme/nodes/pack/ban', { token: admin })).status).toBe(204)
    finish()
    expect(await put).toMatchObject({ status: 403, body: { error: 'node_banned' } })
    const row = await t.deps.db.selectFrom('node_versions').select('status').where('node_id', '=', 'pack').executeTakeFirstOrThrow()
    expect(row.status).toBe('pending')
    expect(await t.deps.db.selectFrom('archives').select('version_id').execute()).toEqual([])
  })
})

describe('a URL that names no version, and the spellings of a signature', () => {
  test('a validly signed URL of a version that does not exist is 404, not a fault', async () => {
    const { pat } = await aliceWithPublisher(t)
    expect((await publish(t, { pat, node: 'pack', version: '1.0.0' })).status).toBe(201)
    const path = '/archives/acme/pack/9.9.9/node.zip'
    const expires = Math.floor(t.clock.now.getTime() / 1000) + 60
    const query = t.deps.signer.sign({ method: 'PUT', path, contentType: 'application/zip', expires })
    expect(await upload(t, `http://registry.test${path}?${query}`)).toMatchObject({ status: 404, body: { error: 'not_found' } })
  })

  test('the signature in upper case is a change to the URL (403); the URL as signed still works', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const url = new URL(res.body.signedUrl)
    url.searchParams.set('signature', url.searchParams.get('signature')!.toUpperCase())
    expect(await upload(t, url.toString())).toMatchObject({ status: 403, body: { error: 'invalid_signature' } })
    expect((await upload(t, res.body.signedUrl)).status).toBe(200)
  })

  test('another method is told that the URL takes only PUT', async () => {
    const { pat } = await aliceWithPublisher(t)
    const res = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const post = await t.app.request(res.body.signedUrl, { method: 'POST', headers: { 'content-type': 'application/zip' }, body: 'x' })
    expect(post.status).toBe(403)
    expect(await post.json()).toMatchObject({ error: 'invalid_signature', message: 'this signed URL accepts only PUT' })
  })
})
