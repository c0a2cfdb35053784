/**
 * A backend that goes away: what needs it answers 503 (with Retry-After), what does not keeps answering, /ready says
 * which one is failing, and the instance recovers by itself when it comes back. The database and the object store
 * are reached through a TCP proxy that the test cuts and restores (the servers themselves are shared by all tests).
 */
import { afterEach, expect, test } from 'bun:test'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { createBlobCache } from '../../src/blobs/disk-cache'
import { createS3BlobStore } from '../../src/blobs/s3'
import { join } from 'node:path'
import { openStore, type Store } from '../../src/store/db'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publish, publishActive, upload, type TestApp } from '../support/app'
import { describeOnBackends, testS3Settings, testSchema } from '../support/backends'
import { proxyUrl, type TcpProxy } from '../support/tcp-proxy'
import { eventually } from '../support/eventually'

let t: TestApp | undefined
let proxy: TcpProxy | undefined
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  proxy?.stop()
  await t?.cleanup()
  for (const close of closers.splice(0)) await close()
})

const recovered = (check: () => Promise<boolean>) => eventually(check, { what: 'the recovery' })

describeOnBackends('the database goes away and comes back', () => {
  test('503 database_unavailable on what needs it, /health answers, /ready says so; it recovers by itself', async () => {
    const schema = await testSchema()
    const proxied = proxyUrl(schema.url)
    proxy = proxied.proxy
    const db: Store = await openStore(proxied.url, { poolSize: 2 })
    closers.push(schema.drop, () => db.destroy())
    t = await makeTestApp({ store: db })
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await t.call('GET', '/nodes/pack')).status).toBe(200)

    proxy.cut()
    const read = await t.call('GET', '/nodes/pack/install')
    expect({ status: read.status, error: read.body.error, retry: read.headers.get('retry-after') }).toEqual({
      status: 503,
      error: 'database_unavailable',
      retry: '5',
    })
    expect((await publish(t, { pat, node: 'other', version: '1.0.0' })).status).toBe(503)
    expect((await t.call('GET', '/health')).status).toBe(200)
    const ready = await t.call('GET', '/ready')
    expect({ status: ready.status, database: ready.body.database }).toEqual({ status: 503, database: 'failing' })
    expect(t.logs.some((l) => l.includes('"event":"database.unavailable"'))).toBe(true)

    proxy.restore()
    await recovered(async () => (await t!.call('GET', '/nodes/pack/install')).status === 200)
    expect((await publish(t, { pat, node: 'other', version: '1.0.0' })).status).toBe(201)
    expect((await t.call('GET', '/ready')).body).toMatchObject({ status: 'ready', database: 'ok' })
  })
})

describeOnBackends('the object store goes away and comes back', () => {
  test('downloads and uploads answer 503 storage_unavailable, nothing half stored; both work again after', async () => {
    const settings = testS3Settings()
    const proxied = proxyUrl(settings.endpoint!)
    proxy = proxied.proxy
    t = await makeTestApp()
    const cache = createBlobCache(join(t.dir, 'cache'), 1024 * 1024)
    t.deps.blobs = createS3BlobStore({ ...settings, endpoint: proxied.url }, createDiskBlobStore(t.dir), { cache })
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const zip = makeZip(samplePack([{ name: 'second.txt', data: 'two' }]))
    const second = await publish(t, { pat, node: 'pack', version: '1.1.0' })

    proxy.cut()
    const download = await t.call('GET', '/archives/acme/pack/1.0.0/node.zip')
    expect({ status: download.status, error: download.body.error }).toEqual({ status: 503, error: 'storage_unavailable' })
    const put = await upload(t, second.body.signedUrl, zip)
    expect({ status: put.status, error: put.body.error }).toEqual({ status: 503, error: 'storage_unavailable' })
    expect((await t.call('GET', '/nodes/pack/versions/1.1.0')).body.status).toBe('NodeVersionStatusPending')
    expect((await t.call('GET', '/ready')).body).toMatchObject({ status: 'not_ready', storage: 'failing' })
    expect((await t.call('GET', '/nodes/pack')).status).toBe(200) // reads of the store go on

    proxy.restore()
    await recovered(async () => (await t!.call('GET', '/archives/acme/pack/1.0.0/node.zip')).status === 200)
    // The failed upload freed its URL: the retry stores the archive.
    expect((await upload(t, second.body.signedUrl, zip)).status).toBe(200)
    const again = await t.app.request('/archives/acme/pack/1.1.0/node.zip')
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(zip)
    expect((await t.call('GET', '/ready')).body).toMatchObject({ status: 'ready', storage: 'ok' })
  })
})
