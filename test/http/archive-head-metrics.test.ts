/** A HEAD of an archive answers as the GET would but downloads nothing: the download metrics leave it out. */
import { afterEach, expect, test } from 'bun:test'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { parseScrape, series } from '../support/metrics'

let t: TestApp
afterEach(() => t.cleanup())

test('HEAD of an archive, whole or a range, is not counted as a download nor its bytes as sent', async () => {
  t = await makeTestApp()
  const { pat } = await aliceWithPublisher(t)
  const zip = makeZip(samplePack())
  await publishActive(t, { pat, node: 'pack', version: '1.0.0', bytes: zip })
  const archive = '/archives/acme/pack/1.0.0/node.zip'

  const whole = await t.app.request(archive, { method: 'HEAD' })
  expect(whole.status).toBe(200)
  expect(whole.headers.get('content-length')).toBe(String(zip.length))
  expect((await t.app.request(archive, { method: 'HEAD', headers: { range: 'bytes=0-9' } })).status).toBe(206)
  await (await t.app.request(archive)).arrayBuffer()

  const s = parseScrape(await (await t.app.request('/metrics')).text())
  expect(series(s, 'registry_mirror_downloads_total', { kind: 'archive' })).toBe(1)
  expect(series(s, 'registry_mirror_downloads_total', { kind: 'archive_range' })).toBe(0)
  expect(series(s, 'registry_mirror_archive_download_bytes_total')).toBe(zip.length)
})
