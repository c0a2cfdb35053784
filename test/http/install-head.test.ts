/** A HEAD of the install route (link checkers, monitors) answers as the GET does and counts no download. */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => {
  t = await makeTestApp()
})
afterEach(() => t.cleanup())

test('HEAD /nodes/{id}/install answers 200 with the GET length and counts nothing, remembered answer or not', async () => {
  const { pat } = await aliceWithPublisher(t)
  await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
  const head = async (path: string) => t.app.request(path, { method: 'HEAD' })
  // Before any GET (nothing remembered), then after one (the answer remembered), with and without a version.
  for (const path of ['/nodes/pack/install', '/nodes/pack/install?version=1.0.0']) {
    const first = await head(path)
    expect(first.status).toBe(200)
    const got = await t.call('GET', path)
    expect(got.status).toBe(200)
    const again = await head(path)
    expect(again.headers.get('content-length')).toBe(String(JSON.stringify(got.body).length))
  }
  await t.deps.downloads.flush()
  expect((await t.call('GET', '/nodes/pack')).body.downloads).toBe(2)
})
