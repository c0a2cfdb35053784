import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { noneMatch, parseRange } from '../../src/http/archives'
import { commitWrite } from '../../src/services/changes'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publish, publishActive, type TestApp } from '../support/app'
import { serveTestApp } from '../support/mirror'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

const bytes = makeZip(samplePack([{ name: 'data.bin', data: crypto.getRandomValues(new Uint8Array(5000)) }]))
const sha256 = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
const path = '/archives/acme/pack/1.0.0/node.zip'

describe('GET /archives/.../node.zip', () => {
  test('serves the exact bytes with ETag = SHA-256 and Content-Length', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0', bytes })
    const res = await t.app.request(path)
    expect(res.status).toBe(200)
    expect(res.headers.get('etag')).toBe(`"${sha256}"`)
    expect(res.headers.get('content-length')).toBe(String(bytes.length))
    expect(res.headers.get('content-type')).toBe('application/zip')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes)
  })

  test('answers 304 to a matching If-None-Match, 206 to a range, 416 outside it', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0', bytes })
    expect((await t.app.request(path, { headers: { 'if-none-match': `"${sha256}"` } })).status).toBe(304)
    // If-Range: the range while the archive is the one named, else all of it.
    const ranged = (ifRange: string) => t.app.request(path, { headers: { range: 'bytes=0-9', 'if-range': ifRange } })
    expect((await ranged(`"${sha256}"`)).status).toBe(206)
    const whole = await ranged('"another"')
    expect([whole.status, (await whole.arrayBuffer()).byteLength]).toEqual([200, bytes.length])
    const part = await t.app.request(path, { headers: { range: 'bytes=10-19' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${bytes.length}`)
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.subarray(10, 20))
    const tail = await t.app.request(path, { headers: { range: 'bytes=-4' } })
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 4))
    const outside = await t.app.request(path, { headers: { range: `bytes=${bytes.length}-` } })
    expect(outside.status).toBe(416)
    expect(outside.headers.get('content-range')).toBe(`bytes */${bytes.length}`)
  })

  test('404 before the upload and for unknown nodes or versions', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await t.app.request(path)).status).toBe(404)
    expect((await t.app.request('/archives/acme/ghost/1.0.0/node.zip')).status).toBe(404)
    expect((await t.app.request('/archives/acme/pack/2.0.0/node.zip')).status).toBe(404)
  })
})

describe('remembered archive lookups', () => {
  const setStatus = (table: 'nodes' | 'node_versions', status: 'banned' | 'flagged' | 'active', nodeId: string, versionId: string) =>
    commitWrite(t.deps, async (w) => {
      if (table === 'nodes')
        await w.db
          .updateTable('nodes')
          .set({ status: status as 'banned' })
          .where('id', '=', nodeId)
          .execute()
      else await w.db.updateTable('node_versions').set({ status }).where('id', '=', versionId).execute()
      w.version(versionId, nodeId)
    })

  test('a download after a version or node ban is refused at once, and served again once lifted', async () => {
    const { pat } = await aliceWithPublisher(t)
    const version = await publishActive(t, { pat, node: 'pack', version: '1.0.0', bytes })
    expect((await t.app.request(path)).status).toBe(200)
    expect((await t.app.request(path)).status).toBe(200) // now remembered
    await setStatus('node_versions', 'banned', 'pack', version.id)
    expect((await t.call('GET', path)).body.error).toBe('version_banned')
    await setStatus('node_versions', 'active', 'pack', version.id)
    expect((await t.app.request(path)).status).toBe(200)
    await setStatus('nodes', 'banned', 'pack', version.id)
    expect((await t.app.request(path)).status).toBe(403)
  })

  test('a flagged archive is looked up for each caller, never remembered for everyone, nor kept by any cache', async () => {
    const { pat, token } = await aliceWithPublisher(t)
    const version = await publishActive(t, { pat, node: 'pack', version: '1.0.0', bytes })
    const active = await t.app.request(path)
    const etag = active.headers.get('etag')!
    expect(active.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    await setStatus('node_versions', 'flagged', 'pack', version.id)
    const member = await t.app.request(path, { headers: { authorization: `Bearer ${token}` } })
    expect([member.status, member.headers.get('cache-control')]).toEqual([200, 'private, no-store'])
    const revalidated = await t.app.request(path, { headers: { authorization: `Bearer ${token}`, 'if-none-match': etag } })
    expect([revalidated.status, revalidated.headers.get('cache-control')]).toEqual([304, 'private, no-store'])
    expect((await t.call('GET', path)).body.error).toBe('version_flagged')
  })

  test('a download count flush keeps the remembered lookup: no store read for the next download', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0', bytes })
    await t.app.request(path)
    await t.call('GET', '/nodes/pack/install')
    await t.deps.downloads.flush()
    const sequence = t.deps.nodeJson.sequence
    expect(t.deps.nodeJson.contentChangedAfter('pack', sequence - 1)).toBe(false)
    expect((await t.app.request(path)).status).toBe(200)
  })
})

describe('parseRange', () => {
  test.each([
    ['bytes=0-9', 100, { start: 0, end: 9 }],
    ['bytes=90-', 100, { start: 90, end: 99 }],
    ['bytes=95-200', 100, { start: 95, end: 99 }],
    ['bytes=-10', 100, { start: 90, end: 99 }],
    ['bytes=100-', 100, null],
    ['bytes=5-1', 100, undefined],
    ['Bytes=0-1', 100, { start: 0, end: 1 }],
    ['items=0-1', 100, undefined],
    ['bytes=0-1,5-6', 100, undefined],
  ])('%p of %p bytes', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected as never)
  })
})

test('over HTTP, a range decided against goes out whole (Bun would answer it from the file itself)', async () => {
  const served = await serveTestApp()
  try {
    const { pat } = await aliceWithPublisher(served)
    await publishActive(served, { pat, node: 'pack', version: '1.0.0', bytes })
    const decidedAgainst: Record<string, string>[] = [
      { range: 'bytes=0-9', 'if-range': '"another"' },
      { range: 'bytes=9-0' },
      { range: 'bytes= 0-1' },
    ]
    for (const headers of decidedAgainst) {
      const res = await fetch(`${served.url}${path}`, { headers })
      expect([res.status, res.headers.get('content-range'), (await res.arrayBuffer()).byteLength]).toEqual([200, null, bytes.length])
    }
    const ranged = await fetch(`${served.url}${path}`, { headers: { range: 'Bytes=0-9' } })
    expect([ranged.status, ranged.headers.get('content-range')]).toEqual([206, `bytes 0-9/${bytes.length}`])
  } finally {
    await served.stop()
  }
})

describe('noneMatch', () => {
  test.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", W/"abc"', true],
    ['*', true],
    ['"abcd"', false],
    ['abc', false],
    ['', false],
  ])('%p', (header, expected) => {
    expect(noneMatch(header, '"abc"')).toBe(expected)
  })
})
