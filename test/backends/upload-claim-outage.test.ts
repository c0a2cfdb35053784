/**
 * An upload that fails because the database went away frees its signed URL once the database is back: the 503 it
 * answered says to retry in 5 s, and the retry must be taken, not refused as 409 upload_in_progress until the
 * claim goes two minutes unrenewed. The database is reached through a TCP proxy the test cuts mid-upload.
 */
import { afterEach, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { openStore, type Store } from '../../src/store/db'
import { claimUpload, releaseUpload } from '../../src/store/uploads'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publish, upload, type TestApp } from '../support/app'
import { describeOnBackends, testSchema } from '../support/backends'
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

describeOnBackends('an upload cut off by a database outage', () => {
  test('its URL is taken again within seconds of the database coming back', async () => {
    const schema = await testSchema()
    const direct = new SQL(schema.url)
    const proxied = proxyUrl(schema.url)
    proxy = proxied.proxy
    const db: Store = await openStore(proxied.url, { poolSize: 2 })
    closers.push(
      schema.drop,
      () => direct.close(),
      () => db.destroy(),
    )
    t = await makeTestApp({ store: db })
    const { pat } = await aliceWithPublisher(t)
    const published = await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const zip = makeZip(samplePack([{ name: 'w.bin', data: crypto.getRandomValues(new Uint8Array(64 * 1024)) }]))

    // Half the archive, then the database goes away while the upload holds its claim, then the rest.
    let sendRest!: () => void
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(zip.slice(0, zip.byteLength / 2))
        sendRest = () => {
          controller.enqueue(zip.slice(zip.byteLength / 2))
          controller.close()
        }
      },
    })
    const url = new URL(published.body.signedUrl)
    const first = t.app.request(url.pathname + url.search, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body })
    await eventually(async () => Number((await direct`select count(*) as n from upload_claims`)[0].n) === 1)
    proxy.cut()
    sendRest()
    const failed = await first
    expect({ status: failed.status, error: ((await failed.json()) as { error: string }).error }).toEqual({
      status: 503,
      error: 'database_unavailable',
    })
    proxy.restore()

    // The retry the 503 asked for, a few seconds on: taken, well before the claim would count as abandoned.
    await eventually(async () => (await upload(t!, published.body.signedUrl, zip)).status === 200)
    expect((await t.call('GET', '/nodes/pack/versions/1.0.0')).body.status).toBe('NodeVersionStatusActive')
  }, 30_000)

  test('a late release leaves alone a claim another upload took over', async () => {
    const schema = await testSchema()
    const db: Store = await openStore(schema.url, { poolSize: 2 })
    closers.push(schema.drop, () => db.destroy())
    t = await makeTestApp({ store: db })
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const versionId = (await db.selectFrom('node_versions').select('id').executeTakeFirstOrThrow()).id
    const mine = '2026-01-01T00:00:00.000Z'
    expect(await claimUpload(db, versionId, mine, mine)).toBe(true)
    // Two minutes unrenewed: another upload takes it over; the first upload's late release must not free it.
    expect(await claimUpload(db, versionId, '2026-01-01T00:02:01.000Z', '2026-01-01T00:02:00.000Z')).toBe(true)
    await releaseUpload(db, versionId, [mine])
    expect((await db.selectFrom('upload_claims').selectAll().execute()).map((c) => c.claimed_at)).toEqual(['2026-01-01T00:02:01.000Z'])
    await releaseUpload(db, versionId, ['2026-01-01T00:02:01.000Z'])
    expect(await db.selectFrom('upload_claims').selectAll().execute()).toEqual([])
  })
})
