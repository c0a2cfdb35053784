/** GET /metrics after known traffic: every count, the route templates, and nothing a client sent in a label. */
import { afterEach, describe, expect, test } from 'bun:test'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publish, publishActive, upload, type TestApp } from '../support/app'
import { parseScrape, series } from '../support/metrics'

let t: TestApp
afterEach(() => t.cleanup())

const scrape = async () => {
  const res = await t.app.request('/metrics')
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
  const text = await res.text()
  return { text, scrape: parseScrape(text) }
}

/** A body with no Content-Length, so that the limit is met while streaming, after the upload was claimed. */
const streamOf = (bytes: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array(bytes))
      controller.close()
    },
  })

describe('GET /metrics', () => {
  test('counts requests by route template and status, uploads, downloads, searches and cache lookups', async () => {
    t = await makeTestApp({ settings: { maxUploadBytes: 64 * 1024 } })
    const { pat } = await aliceWithPublisher(t)
    const zip = makeZip(samplePack())
    await publishActive(t, { pat, node: 'pack', version: '1.0.0', bytes: zip })
    const bad = await publish(t, { pat, node: 'pack', version: '1.1.0' })
    expect((await upload(t, bad.body.signedUrl, makeZip([{ name: '../evil', data: 'x' }]))).body.node_version.status).toBe(
      'NodeVersionStatusFlagged',
    )
    const big = await publish(t, { pat, node: 'pack', version: '1.2.0' })
    const url = new URL(big.body.signedUrl)
    const tooBig = await t.app.request(url.pathname + url.search, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip' },
      body: streamOf(100 * 1024),
    })
    expect(tooBig.status).toBe(413)

    for (let i = 0; i < 2; i++) expect((await t.call('GET', '/nodes/pack/install')).status).toBe(200)
    const archive = '/archives/acme/pack/1.0.0/node.zip'
    const whole = await t.app.request(archive)
    await whole.arrayBuffer()
    expect((await t.app.request(archive, { headers: { range: 'bytes=0-9' } })).status).toBe(206)
    expect((await t.app.request(archive, { headers: { 'if-none-match': whole.headers.get('etag')! } })).status).toBe(304)

    await t.call('GET', '/nodes?limit=5')
    await t.call('GET', '/nodes?limit=5')
    await t.call('GET', '/nodes/search?search=pack')
    expect((await t.call('GET', '/nodes/Secret-Node-Name')).status).toBe(404)
    expect((await t.call('GET', '/no/such/thing-xyz')).status).toBe(404)
    expect((await t.app.request('/nodes', { method: 'PROPFIND' })).status).toBe(404)
    // Answered by a group's body limit, before the route's handler ran: still counted under the route.
    const huge = 'x'.repeat(1024 * 1024 + 1)
    expect(
      (await t.app.request('/publishers', { method: 'POST', body: huge, headers: { 'content-type': 'application/json' } })).status,
    ).toBe(413)
    const preflight = await t.app.request('/nodes', {
      method: 'OPTIONS',
      headers: { origin: 'https://ui.example', 'access-control-request-method': 'GET' },
    })
    expect(preflight.status).toBe(204)

    const { text, scrape: s } = await scrape()
    const requests = (method: string, route: string, status: number) =>
      series(s, 'registry_mirror_http_requests_total', { method, route, status: String(status) })
    expect(requests('POST', '/publishers', 201)).toBe(1)
    expect(requests('POST', '/publishers/:publisherId/nodes/:nodeId/versions', 201)).toBe(3)
    expect(requests('PUT', '/archives/:publisherId/:nodeId/:version/node.zip', 200)).toBe(2)
    expect(requests('PUT', '/archives/:publisherId/:nodeId/:version/node.zip', 413)).toBe(1)
    expect(requests('GET', '/nodes/:nodeId/install', 200)).toBe(2)
    expect(requests('GET', '/archives/:publisherId/:nodeId/:version/node.zip', 200)).toBe(1)
    expect(requests('GET', '/archives/:publisherId/:nodeId/:version/node.zip', 206)).toBe(1)
    expect(requests('GET', '/archives/:publisherId/:nodeId/:version/node.zip', 304)).toBe(1)
    expect(requests('GET', '/nodes', 200)).toBe(2)
    expect(requests('GET', '/nodes/search', 200)).toBe(1)
    expect(requests('GET', '/nodes/:nodeId', 404)).toBe(1)
    expect(requests('GET', 'unmatched', 404)).toBe(1)
    expect(requests('other', 'unmatched', 404)).toBe(1)
    expect(requests('POST', '/publishers', 413)).toBe(1)
    expect(requests('OPTIONS', 'unmatched', 204)).toBe(1)

    const install = { method: 'GET', route: '/nodes/:nodeId/install' }
    expect(series(s, 'registry_mirror_http_request_duration_seconds_count', install)).toBe(2)
    expect(series(s, 'registry_mirror_http_request_duration_seconds_bucket', { ...install, le: '+Inf' })).toBe(2)

    expect(series(s, 'registry_mirror_archive_uploads_total', { outcome: 'active' })).toBe(1)
    expect(series(s, 'registry_mirror_archive_uploads_total', { outcome: 'flagged' })).toBe(1)
    expect(series(s, 'registry_mirror_archive_uploads_total', { outcome: 'failed' })).toBe(1)
    expect(series(s, 'registry_mirror_archive_uploads_total', { outcome: 'pending' })).toBe(0)
    expect(series(s, 'registry_mirror_downloads_total', { kind: 'install' })).toBe(2)
    expect(series(s, 'registry_mirror_downloads_total', { kind: 'archive' })).toBe(1)
    expect(series(s, 'registry_mirror_downloads_total', { kind: 'archive_range' })).toBe(1)
    expect(series(s, 'registry_mirror_archive_download_bytes_total')).toBe(zip.length + 10)

    // The second /nodes is a response-cache hit and runs no query; the search then finds the node JSON cached.
    expect(series(s, 'registry_mirror_search_queries_total', { engine: 'index' })).toBe(2)
    expect(series(s, 'registry_mirror_search_queries_total', { engine: 'store' })).toBe(0)
    expect(series(s, 'registry_mirror_cache_lookups_total', { cache: 'list_response', result: 'hit' })).toBe(1)
    expect(series(s, 'registry_mirror_cache_lookups_total', { cache: 'list_response', result: 'miss' })).toBe(2)
    expect(series(s, 'registry_mirror_cache_lookups_total', { cache: 'node_json', result: 'hit' })).toBe(1)
    expect(series(s, 'registry_mirror_cache_lookups_total', { cache: 'node_json', result: 'miss' })).toBe(1)
    expect(series(s, 'registry_mirror_search_index_nodes')).toBe(1)
    expect(series(s, 'registry_mirror_search_index_ready')).toBe(1)

    expect(series(s, 'process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024)
    expect(series(s, 'registry_mirror_js_heap_used_bytes')).toBeGreaterThan(0)
    expect(series(s, 'process_cpu_seconds_total')).toBeGreaterThan(0)
    expect(series(s, 'registry_mirror_event_loop_delay_seconds_count')).toBeNumber()

    // Labels hold templates and closed sets only: nothing a client sent.
    for (const sent of ['Secret-Node-Name', 'thing-xyz', 'PROPFIND', 'acme', 'pack', pat]) expect(text).not.toContain(sent)
    const routes = new Set(s.filter((x) => x.name === 'registry_mirror_http_requests_total').map((x) => x.labels.route))
    for (const route of routes) expect(route).toMatch(/^(unmatched|\/[\w/:.-]*)$/)
  })

  test('a store-answered search (index still warming) counts under engine="store"', async () => {
    t = await makeTestApp({ engine: 'store' })
    await t.call('GET', '/nodes/search?search=x')
    await t.call('GET', '/nodes/search?search=x')
    const { scrape: s } = await scrape()
    // The response cache stays out of the way until the index answers.
    expect(series(s, 'registry_mirror_search_queries_total', { engine: 'store' })).toBe(2)
    expect(series(s, 'registry_mirror_cache_lookups_total', { cache: 'list_response', result: 'hit' })).toBe(0)
    expect(series(s, 'registry_mirror_search_index_ready')).toBe(0)
  })

  test('--metrics=false leaves the route out', async () => {
    t = await makeTestApp({ settings: { metrics: false } })
    expect((await t.call('GET', '/metrics')).body).toEqual({ error: 'not_found', message: 'No route for GET /metrics' })
  })
})
