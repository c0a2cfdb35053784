/**
 * The video proxy's and image staging's checks at their edges, each found untested by breaking it (a hand-made
 * mutant survived the suite): the start body's size and model bounds, which credential wins, and the staged
 * image's Content-Length cap, bytes that are no image, and the staging rate limit.
 */
import { describe, expect, test } from 'bun:test'
import { base64Length } from '../../src/domain/images'
import { nodeStartBody } from '../support/video-node'
import { PNG } from '../support/video-provider'
import { alice, fake, IMAGES, setUp, start, t, useVideoSuite } from '../support/video-suite'

useVideoSuite()

describe('the start request', () => {
  test('a body one byte over the limit (two images at the image limit, plus 256 KiB) is 413; nothing reaches the provider', async () => {
    const maxImageBytes = 4096
    await setUp({ settings: { video: { public: false, maxImageBytes } } })
    const limit = 2 * base64Length(maxImageBytes) + 256 * 1024
    const body = JSON.stringify({ ...nodeStartBody(IMAGES), pad: '' })
    const padded = body.replace('"pad":""', `"pad":"${'x'.repeat(limit + 1 - body.length)}"`)
    expect(padded.length).toBe(limit + 1)
    const res = await start(padded)
    expect(res.status).toBe(413)
    expect(fake.starts).toEqual([])
  })

  test('a model of more than 100 characters is 400', async () => {
    const res = await start({ ...nodeStartBody(IMAGES), model: 'm'.repeat(101) })
    expect(res.status).toBe(400)
    expect(res.body.details).toEqual(['body.model: must be at most 100 characters'])
    expect((await start({ ...nodeStartBody(IMAGES), model: 'm'.repeat(100) })).status).toBe(200)
  })

  test('a bearer token wins over X-API-KEY: a bad key beside a good bearer token starts as its user', async () => {
    const res = await start(nodeStartBody(IMAGES), { authorization: `Bearer ${alice}`, 'x-api-key': 'not-a-token' })
    expect(res.status).toBe(200)
  })
})

async function stage(body: unknown = { file_name: 'frame.png', content_type: 'image/png' }) {
  return t.call('POST', '/customers/storage', { headers: { 'x-api-key': alice }, body })
}

describe('staged images', () => {
  test('a Content-Length above the image limit is 413 before a byte is read; the URL still takes the image', async () => {
    await setUp({ settings: { video: { public: false, maxImageBytes: PNG.length } } })
    const { upload_url } = (await stage()).body
    let reads = 0
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          reads++
          controller.enqueue(new Uint8Array(PNG.length + 1))
          controller.close()
        },
      },
      { highWaterMark: 0 },
    )
    const res = await t.app.request(upload_url, {
      method: 'PUT',
      headers: { 'content-type': 'image/png', 'content-length': String(PNG.length + 1) },
      body,
      duplex: 'half',
    } as RequestInit)
    expect(res.status).toBe(413)
    expect(reads).toBe(0)
    const put = await t.app.request(upload_url, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: PNG })
    expect(put.status).toBe(200)
  })

  test('staged and sent without a type, bytes that are no image are 415', async () => {
    const { upload_url } = (await stage({ file_name: 'frame' })).body
    const res = await t.app.request(upload_url, { method: 'PUT', body: new TextEncoder().encode('<html>no image</html>') })
    expect(res.status).toBe(415)
  })

  test('20 stagings a minute per caller, then 429', async () => {
    for (let i = 0; i < 20; i++) expect((await stage()).status).toBe(200)
    const res = await stage()
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})
