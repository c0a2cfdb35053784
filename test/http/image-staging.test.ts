/**
 * Image staging for the video node: signed upload and download URLs, what a PUT may hold, the provider fetching
 * a staged image over HTTP, and the sweep a day later.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { sweepStagedImages } from '../../src/services/staged-images'
import { addUser, makeTestApp, PUBLIC_URL, type TestApp } from '../support/app'
import { assertNodeAccepts, nodeStartBody } from '../support/video-node'
import { JPEG_HEAD, PNG, startFakeProvider, useProvider, type FakeProvider } from '../support/video-provider'
import { holdWriteTurn, settled } from '../support/writes'

let fake: FakeProvider
let t: TestApp
let alice: string

beforeAll(async () => (fake = await startFakeProvider()))
afterAll(() => fake.stop())
/** `local`: on SQLite whatever the test pass's backend. */
async function setUp(local = false) {
  fake.reset()
  t = await makeTestApp({ settings: { video: { public: false, maxImageBytes: 4096 } }, local })
  useProvider(t, fake)
  alice = await addUser(t, 'alice')
}
beforeEach(() => setUp())
afterEach(async () => {
  expect(t.logs.join('\n')).not.toContain(fake.key)
  await t.cleanup()
})

async function stage(body: unknown = { file_name: 'frame.png', content_type: 'image/png' }) {
  return t.call('POST', '/customers/storage', { headers: { 'x-api-key': alice }, body })
}

/** PUT as the node does: raw bytes, its Content-Type, no credential. */
async function put(url: string, bytes: Uint8Array, contentType: string | null = 'image/png') {
  const res = await t.app.request(url, { method: 'PUT', headers: contentType ? { 'content-type': contentType } : {}, body: bytes })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

describe('POST /customers/storage', () => {
  test('answers the two URLs the node requires: absolute, on the public URL, signed and expiring', async () => {
    const res = await stage()
    expect(res.status).toBe(200)
    assertNodeAccepts('UploadResponse', res.body)
    const upload = new URL(res.body.upload_url)
    const download = new URL(res.body.download_url)
    expect(upload.origin + upload.pathname).toBe(download.origin + download.pathname)
    expect(upload.href).toStartWith(`${PUBLIC_URL}/customers/storage/`)
    const now = t.clock.now.getTime() / 1000
    expect(Number(upload.searchParams.get('expires'))).toBe(Math.floor(now + 900))
    expect(Number(download.searchParams.get('expires'))).toBe(Math.floor(now + 86_400))
    expect(upload.searchParams.get('signature')).not.toBe(download.searchParams.get('signature'))
  })

  test('needs a caller, image types only, a file name', async () => {
    expect((await t.call('POST', '/customers/storage', { body: { file_name: 'a.png' } })).status).toBe(401)
    const bad = await stage({ file_name: '', content_type: 'text/html' })
    expect(bad).toMatchObject({
      status: 400,
      body: { details: ['body.file_name: must not be empty', 'body.content_type: must be one of image/png, image/jpeg, image/webp'] },
    })
    expect((await stage({ file_name: 'a' })).status).toBe(200) // the node leaves content_type out when it has none
  })
})

describe('the signed PUT and GET', () => {
  test('PUT the PNG bytes (200), then the download URL serves them as an image, to anyone holding it', async () => {
    const { upload_url, download_url } = (await stage()).body
    expect(await put(upload_url, PNG)).toEqual({ status: 200, body: undefined })
    const res = await t.app.request(download_url)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG)
    const row = await t.deps.db.selectFrom('staged_images').selectAll().executeTakeFirstOrThrow()
    expect(row).toMatchObject({
      caller: 'user:alice',
      file_name: 'frame.png',
      state: 'ready',
      media_type: 'image/png',
      size_bytes: PNG.length,
    })
  })

  test('a PUT claims its image in a write turn: not while a download batch is in hand', async () => {
    // Turns are SQLite's (services/write-turn.ts); PostgreSQL runs writes side by side.
    await t.cleanup()
    await setUp(true)
    const { upload_url } = (await stage()).body
    const state = async () => (await t.deps.db.selectFrom('staged_images').select('state').executeTakeFirstOrThrow()).state
    const turn = await holdWriteTurn(t.deps)
    const sent = put(upload_url, PNG)
    await settled()
    expect(await state()).toBe('pending')
    await turn.release()
    expect((await sent).status).toBe(200)
    expect(await state()).toBe('ready')
  })

  test('a second PUT is refused (single use); the first stays', async () => {
    const { upload_url } = (await stage()).body
    expect((await put(upload_url, PNG)).status).toBe(200)
    expect(await put(upload_url, PNG)).toEqual({
      status: 409,
      body: { message: 'this image was already uploaded, or is being uploaded', details: [] },
    })
  })

  test('what a PUT may not hold: another type, bytes that are no image, a type other than staged, too many bytes', async () => {
    const { upload_url } = (await stage()).body
    expect(await put(upload_url, PNG, 'text/html')).toEqual({
      status: 415,
      body: { message: 'only PNG, JPEG and WebP images can be staged', details: [] },
    })
    expect((await put(upload_url, new TextEncoder().encode('<script>alert(1)</script>'))).body.message).toBe(
      'only PNG, JPEG and WebP images can be staged',
    )
    expect((await put(upload_url, JPEG_HEAD, 'image/jpeg')).body.message).toBe('this upload URL is for image/png')
    expect((await put(upload_url, JPEG_HEAD)).body.message).toBe('the bytes are a image/jpeg image, not image/png')
    expect(await put(upload_url, Uint8Array.from([...PNG, ...new Uint8Array(4096)]))).toEqual({
      status: 413,
      body: { message: 'the image is larger than the limit of 4096 bytes', details: [] },
    })
    // Each refusal freed the URL: the right bytes still go in.
    expect((await put(upload_url, PNG)).status).toBe(200)
  })

  test('a PUT without Content-Type to an image staged without one takes any of the image types', async () => {
    const { upload_url, download_url } = (await stage({ file_name: 'x' })).body
    expect(await put(upload_url, JPEG_HEAD, null)).toEqual({ status: 200, body: undefined })
    expect((await t.app.request(download_url)).headers.get('content-type')).toBe('image/jpeg')
  })

  test('bad and expired signatures are 403; a GET before the upload is 404; the upload URL does not download', async () => {
    const { upload_url, download_url } = (await stage()).body
    expect((await t.app.request(download_url)).status).toBe(404)
    const forged = download_url.replace(/signature=[0-9a-f]{4}/, 'signature=0000')
    expect((await t.app.request(forged)).status).toBe(403)
    expect((await t.app.request(upload_url)).status).toBe(403)
    const expires = new URL(download_url).searchParams.get('expires')!
    const respelt = [`+${expires}`, `0${expires}`, `${expires}.0`].map((e) =>
      download_url.replace(`expires=${expires}`, `expires=${encodeURIComponent(e)}`),
    )
    for (const added of [`${download_url}&x=1`, `${download_url}&expires=${expires}`, ...respelt]) {
      expect((await t.app.request(added)).status).toBe(403)
    }
    expect((await put(`${upload_url}&x=1`, PNG)).status).toBe(403)
    t.clock.now = new Date(t.clock.now.getTime() + 901_000)
    const late = await put(upload_url, PNG)
    expect(late).toEqual({ status: 403, body: { message: 'this signed URL has expired', details: [] } })
  })
})

describe('the provider fetches staged images', () => {
  test('over HTTP from the public URL, the bytes that were PUT', async () => {
    const served = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req, srv) => t.app.fetch(req, srv) })
    try {
      t.deps.settings.publicUrl = `http://127.0.0.1:${served.port}`
      const urls = [(await stage()).body, (await stage()).body]
      for (const u of urls) expect((await put(u.upload_url, PNG)).status).toBe(200)
      fake.fetchImages = true
      const res = await t.call('POST', '/proxy/vidu/start-end2video', {
        headers: { 'x-api-key': alice },
        body: nodeStartBody(urls.map((u) => u.download_url)),
      })
      expect(res.status).toBe(200)
      expect(fake.starts[0]!.fetched).toEqual([
        { status: 200, type: 'image/png', bytes: PNG },
        { status: 200, type: 'image/png', bytes: PNG },
      ])
    } finally {
      await served.stop(true)
    }
  })
})

describe('the sweep', () => {
  test('removes images a day after staging, and their bytes unless another image holds the same', async () => {
    const old = (await stage()).body
    await put(old.upload_url, PNG)
    t.clock.now = new Date(t.clock.now.getTime() + 12 * 3600_000)
    const newer = (await stage()).body
    await put(newer.upload_url, PNG) // the same bytes
    t.clock.now = new Date(t.clock.now.getTime() + 12 * 3600_000 + 1000)
    expect(await sweepStagedImages(t.deps)).toBe(1)
    expect((await t.app.request(newer.download_url)).status).toBe(200) // shared bytes kept
    t.clock.now = new Date(t.clock.now.getTime() + 12 * 3600_000)
    expect(await sweepStagedImages(t.deps)).toBe(1)
    expect(await t.deps.db.selectFrom('staged_images').selectAll().execute()).toEqual([])
    const sha = new Bun.CryptoHasher('sha256').update(PNG).digest('hex')
    expect(await t.deps.blobs.open(sha)).toBeUndefined()
  })
})
