/** The web pages over HTTP: every page's status and headers, escaping of everything rendered, API parity, a path prefix. */
import { afterEach, describe, expect, test } from 'bun:test'
import { aliceWithPublisher, makeTestApp, publish, publishActive, upload, type TestApp } from '../support/app'
import { addresses, escaped, HOSTILE, pack, PAGES, pageOf, seedPages } from '../support/web-pages'
import { writeDocuments } from '../../src/services/node-documents'
import { loadFixture } from '../../src/services/fixture'

let t: TestApp
afterEach(async () => {
  await t?.cleanup()
})

const page = (path: string, init?: RequestInit) => pageOf(t, path, init)

describe('every page', () => {
  test('answers HTML with a title, one h1, landmarks, and headers that keep every request on this origin', async () => {
    t = await makeTestApp()
    await seedPages(t)
    for (const path of PAGES) {
      const res = await page(path)
      expect({ path, status: res.status }).toEqual({ path, status: 200 })
      expect(res.headers.get('content-type')).toBe('text/html; charset=UTF-8')
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      )
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('x-frame-options')).toBe('DENY')
      expect(res.headers.get('referrer-policy')).toBe('same-origin')
      if (path.startsWith('/-/results')) {
        expect(res.html).not.toContain('<html')
        continue
      }
      expect(res.html.startsWith('<!DOCTYPE html><html lang="en">')).toBe(true)
      expect(res.html).toMatch(/<title>[^<]+ · registry-mirror<\/title>/)
      expect(res.html.match(/<h1[ >]/g)).toHaveLength(1)
      expect(res.html).toContain('<main id="main"')
      expect(res.html).toContain('<nav aria-label="Main">')
      // No inline script or style for the CSP to refuse, and nothing from another origin.
      expect(res.html).not.toMatch(/<script>|<style|\sstyle="|\son[a-z]+="/)
      expect(
        addresses(res.html).filter((a) => !a.startsWith('/') && !a.startsWith('#') && !/^https:\/\/(github\.com|gitlab)/.test(a)),
      ).toEqual([])
    }
  })

  test('the API keeps its own answers: no page headers, JSON 404s', async () => {
    t = await makeTestApp()
    const search = await page('/nodes/search')
    expect(search.status).toBe(200)
    expect(search.headers.get('content-security-policy')).toBeNull()
    expect(search.headers.get('content-type')).toBe('application/json')
    const missing = await page('/no-such-route')
    expect(missing.status).toBe(404)
    expect(JSON.parse(missing.html)).toMatchObject({ error: 'not_found' })
  })

  test('the search form labels every field, and names them as GET /nodes/search does', async () => {
    t = await makeTestApp()
    const { html } = await page('/')
    expect(html).toContain('<form class="search panel" role="search" aria-label="Nodes" method="get" action="/" data-results="/-/results">')
    for (const name of ['search', 'repository_url_search', 'host_node_search', 'supported_os', 'supported_accelerator']) {
      expect(html).toContain(`<label for="f-${name}">`)
      expect(html).toMatch(new RegExp(`<input id="f-${name}"[^>]* name="${name}"`))
    }
    expect(html).toContain('role="status"')
  })

  test('assets are served from the executable with a content hash, cached for a year; others are a 404 page', async () => {
    t = await makeTestApp()
    const { html } = await page('/')
    const [css, js, icon] = ['css', 'js', 'svg'].map((ext) => addresses(html).find((a) => a.endsWith(`.${ext}`))!)
    for (const [path, type] of [
      [css, 'text/css; charset=utf-8'],
      [js, 'text/javascript; charset=utf-8'],
      [icon, 'image/svg+xml'],
    ] as const) {
      expect(path).toMatch(/^\/-\/assets\/(app|icon)\.[0-9a-f]{12}\.(css|js|svg)$/)
      const res = await t.app.request(path!)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe(type)
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    }
    // A few kilobytes of script at most.
    expect((await (await t.app.request(js!)).text()).length).toBeLessThan(4096)
    expect((await page('/-/assets/app.000000000000.css')).status).toBe(404)
  })

  test('unknown pages, nodes and publishers are HTML 404 pages; bad parameters a 400 page naming them', async () => {
    t = await makeTestApp()
    for (const path of ['/-', '/-/nope', '/-/nodes/nope', '/-/publishers/nope']) {
      const res = await page(path)
      expect({ path, status: res.status }).toEqual({ path, status: 404 })
      expect(res.html).toContain('<h1>Not found</h1>')
      expect(res.headers.get('content-security-policy')).not.toBeNull()
    }
    const bad = await page('/?page=0')
    expect(bad.status).toBe(400)
    expect(bad.html).toContain('page: must be at least 1')
    expect((await page('/-/publishers/acme?page=x')).status).toBe(400)
    // The live-search fragment says what is wrong in place of the results.
    const fragment = await page(`/-/results?search=${'x'.repeat(501)}`)
    expect(fragment.status).toBe(400)
    expect(fragment.html).toBe('<p class="notice" data-summary="true">search: must be at most 500 characters</p>')
  })

  test('a banned node is a 403 page, as in the API; a node id in another case redirects to its own spelling', async () => {
    t = await makeTestApp()
    await seedPages(t)
    const moved = await page('/-/nodes/BLUR-Pack')
    expect(moved.status).toBe(301)
    expect(moved.headers.get('location')).toBe('/-/nodes/blur-pack')
    await t.deps.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'blur-pack').execute()
    await writeDocuments(t.deps.db, ['blur-pack']) // what a write through commitWrite does too
    const banned = await page('/-/nodes/blur-pack')
    expect(banned.status).toBe(403)
    expect(banned.html).toContain('<p>Node Banned</p>')
  })

  test('HEAD answers like GET, without a body', async () => {
    t = await makeTestApp()
    const res = await t.app.request('/', { method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=UTF-8')
    expect(await res.text()).toBe('')
    expect(res.headers.get('content-length')).toBe(String((await (await t.app.request('/')).arrayBuffer()).byteLength))
  })
})

describe('search', () => {
  const ids = (html: string) => [...html.matchAll(/<h3 id="node-([^"]+)">/g)].map((m) => m[1])

  test('the same parameters find the same nodes, in the same order, as GET /nodes/search', async () => {
    t = await makeTestApp()
    await seedPages(t)
    const queries = [
      '',
      'search=blur',
      'search=kit',
      'repository_url_search=gitlab.example/tools',
      'host_node_search=motionblur',
      'comfy_node_search=UpscaleImage',
      'supported_os=POSIX :: Linux',
      'supported_os=Microsoft%20::%20Windows&supported_accelerator=GPU :: NVIDIA CUDA',
      'supported_accelerator=NPU',
      'limit=2',
      'limit=2&page=2',
      'limit=2&page=9',
    ]
    for (const query of queries) {
      // A repeated parameter counts once (its first value), so the page size goes in only when the query has none.
      const api = (await t.call('GET', `/nodes/search?${query.includes('limit=') ? query : `limit=20&${query}`}`)).body
      const home = await page(`/?${query}`)
      const fragment = await page(`/-/results?${query}`)
      expect({ query, ids: ids(home.html) }).toEqual({ query, ids: api.nodes.map((n: { id: string }) => n.id) })
      expect(ids(fragment.html)).toEqual(ids(home.html))
    }
  })

  test('results say how many matched and page with the search kept; past the end says so', async () => {
    t = await makeTestApp()
    await seedPages(t)
    const all = await page('/')
    expect(all.html).toContain('<h2 id="results-heading" data-summary="true">All 3 nodes</h2>')
    const first = await page('/?supported_os=Microsoft+%3A%3A+Windows&limit=1')
    expect(first.html).toContain('>2 nodes found<')
    const one = await page('/?search=blur')
    expect(one.html).toContain('>1 node found<')
    expect(one.html).toContain('<a href="/nodes/search?search=blur&amp;limit=20">This search in the JSON API</a>')
    const paged = await page('/?limit=1&page=2')
    expect(paged.html).toContain('<a href="/?limit=1" rel="prev">Previous page</a>')
    expect(paged.html).toContain('<a href="/?limit=1&amp;page=3" rel="next">Next page</a>')
    expect(paged.html).toContain('Page 2 of 3')
    const past = await page('/?limit=1&page=7')
    expect(past.html).toContain('This page is past the last result.')
    expect(past.html).toContain('<a href="/?limit=1&amp;page=3" rel="prev">Previous page</a>')
    expect(past.html).not.toContain('Page 7')
    const none = await page('/?search=zzzzqqq')
    expect(none.html).toContain('No node matches this search.')
  })
})

describe('the node page', () => {
  test('shows description, publisher, install command, download, versions, host node classes and the facts', async () => {
    t = await makeTestApp()
    await seedPages(t)
    await t.call('GET', '/nodes/blur-pack/install')
    await t.deps.downloads.flush() // counted in memory, written at most a second later
    await t.call('POST', '/nodes/blur-pack/reviews?star=4')
    const { html } = await page('/-/nodes/blur-pack')
    expect(html).toContain('<title>\u2068Blur Pack\u2069 (blur-pack) · registry-mirror</title>')
    expect(html).toContain('<p class="description">Blurs images.</p>')
    expect(html).toContain('by <a href="/-/publishers/acme"><bdi>acme name</bdi></a>')
    expect(html).toContain('<pre id="install-command">ENVIRONMENT=dev comfy node registry-install blur-pack</pre>')
    // comfy-cli reaches only http://localhost:8080; this registry is elsewhere, and the page says so.
    expect(html).toContain('This registry is at http://registry.test: run comfy-cli where http://localhost:8080 leads here')
    expect(html).toContain('<a class="button" href="/archives/acme/blur-pack/1.1.0/node.zip" download="">Download version 1.1.0</a>')
    expect([...html.matchAll(/<h3 id="v-[^"]+">([^<]+)<\/h3>/g)].map((m) => m[1])).toEqual(['1.1.0', '1.0.0'])
    expect(html).toContain('<p class="changelog">Motion blur.</p>')
    expect(html).toContain('<a href="/?host_node_search=MotionBlur"><code>MotionBlur</code></a>')
    expect(html).toContain('<dt>Repository</dt><dd><a href="https://github.com/acme/blur-pack" rel="noopener noreferrer nofollow">')
    expect(html).toContain('<dt>License</dt><dd>MIT</dd>')
    expect(html).toContain('<dt>Downloads</dt><dd>1</dd>')
    expect(html).toContain('<dt>Rating</dt><dd>4.0 of 5</dd>')
  })

  test('lists the first 200 host node classes of a large archive, and links the API for all of them', async () => {
    t = await makeTestApp()
    const { pat } = await aliceWithPublisher(t)
    const classes = Array.from({ length: 250 }, (_, i) => `Class${String(i).padStart(3, '0')}`)
    await publishActive(t, { pat, node: 'big-pack', version: '1.0.0', bytes: pack(classes) })
    const { html } = await page('/-/nodes/big-pack')
    const listed = [...html.matchAll(/<a href="\/\?host_node_search=(\w+)"><code>/g)].map((m) => m[1])
    expect(listed).toEqual(classes.slice(0, 200))
    expect(html).toContain(
      '250 classes in version 1.0.0; each link finds every pack that provides it. The first 200 are listed here, all of them in <a href="/nodes/big-pack/versions/1.0.0/host-nodes">the API</a>.',
    )
    expect((await t.call('GET', '/nodes/big-pack/versions/1.0.0/host-nodes')).body.host_nodes).toHaveLength(250)
  })

  test('pending and flagged versions: statuses and reasons shown, only servable archives linked, flagged never installed', async () => {
    t = await makeTestApp({ settings: { autoApprove: false } })
    const { pat } = await aliceWithPublisher(t)
    const pending = await publishActive(t, { pat, node: 'slow-pack', version: '1.0.0' })
    expect(pending.status).toBe('NodeVersionStatusPending')
    const res = await publish(t, { pat, node: 'slow-pack', version: '1.1.0' })
    expect((await upload(t, res.body.signedUrl, new TextEncoder().encode('not a zip'))).status).toBe(200)
    const { html } = await page('/-/nodes/slow-pack')
    expect(html).toContain('<span class="badge warn">Pending review</span>')
    expect(html).toContain('<span class="badge bad">Flagged</span>')
    expect(html).toMatch(/<p class="muted">Reason: [^<]+<\/p>/)
    expect(html).toContain('href="/archives/acme/slow-pack/1.0.0/node.zip"')
    expect(html).not.toContain('/archives/acme/slow-pack/1.1.0/node.zip')
    expect(html).toContain('No version of this node can be installed yet')
  })

  test('shows its versions 50 a page, newest first, and installs the newest active one wherever it is listed', async () => {
    t = await makeTestApp()
    const { pat } = await aliceWithPublisher(t)
    for (const version of ['1.0.0', '1.1.0']) await publishActive(t, { pat, node: 'long-pack', version })
    // 51 newer versions awaiting review (staged as rows: they change nothing a node's document shows).
    const now = new Date().toISOString()
    await t.deps.db
      .insertInto('node_versions')
      .values(
        Array.from({ length: 51 }, (_, i) => ({
          id: crypto.randomUUID(),
          node_id: 'long-pack',
          version: `2.0.${i}`,
          status: 'pending',
          created_at: now,
          updated_at: now,
        })),
      )
      .execute()
    const versionsOf = (html: string) => [...html.matchAll(/<h3 id="v-[^"]+">([^<]+)<\/h3>/g)].map((m) => m[1])
    const install = '<a class="button" href="/archives/acme/long-pack/1.1.0/node.zip" download="">Download version 1.1.0</a>'

    const first = await page('/-/nodes/long-pack')
    expect(versionsOf(first.html)).toEqual(Array.from({ length: 50 }, (_, i) => `2.0.${50 - i}`))
    expect(first.html).toContain('<p class="muted">53 versions, newest first.</p>')
    expect(first.html).toContain('<nav class="pager" aria-label="Version pages">')
    expect(first.html).toContain('<li aria-current="page">Page 1 of 2</li>')
    expect(first.html).toContain('<a href="/-/nodes/long-pack?page=2" rel="next">Next page</a>')
    expect(first.html).toContain(install) // 1.1.0 is listed on the second page only

    const second = await page('/-/nodes/long-pack?page=2')
    expect(versionsOf(second.html)).toEqual(['2.0.0', '1.1.0', '1.0.0'])
    expect(second.html).toContain('<a href="/-/nodes/long-pack" rel="prev">Previous page</a>')
    expect(second.html).not.toContain('rel="next"')
    expect(second.html).toContain(install)

    const past = await page('/-/nodes/long-pack?page=9')
    expect(versionsOf(past.html)).toEqual([])
    expect(past.html).toContain('No more versions.')
    expect(past.html).toContain('<a href="/-/nodes/long-pack?page=2" rel="prev">Previous page</a>')
    expect((await page('/-/nodes/long-pack?page=0')).status).toBe(400)
    // Another spelling of the id is sent to the node's own, on the same page.
    const moved = await t.app.request('/-/nodes/LONG-PACK?page=2')
    expect(moved.status).toBe(301)
    expect(moved.headers.get('location')).toBe('/-/nodes/long-pack?page=2')
    // A node of few versions has no pager.
    await publishActive(t, { pat, node: 'short-pack', version: '1.0.0' })
    expect((await page('/-/nodes/short-pack')).html).not.toContain('class="pager"')
  })

  test('hostile text from publishers and archives is shown as text, and only http(s) addresses become links', async () => {
    t = await makeTestApp()
    const { token, pat } = await aliceWithPublisher(t)
    expect((await t.call('PUT', '/publishers/acme', { token, body: { name: HOSTILE, description: HOSTILE } })).status).toBe(200)
    await publishActive(t, {
      pat,
      node: 'evil-pack',
      version: '1.0.0',
      nodeFields: {
        name: HOSTILE,
        description: HOSTILE,
        author: HOSTILE,
        tags: [HOSTILE],
        license: HOSTILE,
      },
      versionFields: { changelog: HOSTILE, dependencies: [HOSTILE] },
      bytes: pack([HOSTILE, 'Quote"Class']),
    })
    // The API takes only http(s) repositories; a mirrored node or a fixture may hold any text.
    const fixture = { nodes: [{ id: 'evil-pack', publisher: 'acme', repository: 'javascript:alert(3)' }] }
    expect(await loadFixture(t.deps, JSON.stringify(fixture))).toMatchObject({ ok: true })
    for (const path of [
      '/-/nodes/evil-pack',
      '/?search=evil',
      '/-/results?search=evil',
      '/-/publishers/acme',
      `/?host_node_search=${encodeURIComponent(HOSTILE)}`,
    ]) {
      const { status, html } = await page(path)
      expect({ path, status }).toEqual({ path, status: 200 })
      expect(html).not.toContain('<script>alert')
      expect(html).not.toContain('<img src=x')
      expect(html).not.toContain('javascript:alert(3)"')
    }
    const { html } = await page('/-/nodes/evil-pack')
    expect(html).toContain(`<h1>${escaped}</h1>`)
    expect(html).toContain(`<title>\u2068${escaped}\u2069 (evil-pack) · registry-mirror</title>`)
    expect(html).toContain(`<p class="description">${escaped}</p>`)
    expect(html).toContain(`<p class="changelog">${escaped}</p>`)
    expect(html).toContain('<dt>Repository</dt><dd><span>javascript:alert(3)</span></dd>')
    expect(html).toContain('<code>Quote&quot;Class</code>')
    expect(html).toContain('href="/?host_node_search=Quote%22Class"')
    expect(html).toContain(`href="/?host_node_search=%3Cscript%3Ealert%281%29%3C%2Fscript%3E%3Cimg+src%3Dx+onerror%3Dalert%282%29%3E"`)
    const publisher = (await page('/-/publishers/acme')).html
    expect(publisher).toContain(`<h1>${escaped}</h1>`)
    expect(publisher).toContain(`<p class="description">${escaped}</p>`)
  })
})

describe('text from elsewhere in either direction', () => {
  test('a right-to-left override in a name, tag or title cannot reorder the text around it', async () => {
    t = await makeTestApp()
    const RLO = '\u202e'
    const { token, pat } = await aliceWithPublisher(t)
    expect((await t.call('PUT', '/publishers/acme', { token, body: { name: `${RLO}Acme` } })).status).toBe(200)
    await t.deps.db
      .updateTable('users')
      .set({ name: `${RLO}Alice` })
      .where('id', '=', 'alice')
      .execute()
    await publishActive(t, { pat, node: 'turned-pack', version: '1.0.0', nodeFields: { name: `Turned${RLO}`, tags: [`a${RLO}`, 'b'] } })
    const node = (await page('/-/nodes/turned-pack')).html
    expect(node).toContain(`by <a href="/-/publishers/acme"><bdi>${RLO}Acme</bdi></a> · version 1.0.0`)
    expect(node).toContain(`<dd><bdi>a${RLO}</bdi>, <bdi>b</bdi></dd>`)
    expect(node).toContain(`<title>\u2068Turned${RLO}\u2069 (turned-pack) · registry-mirror</title>`)
    expect((await page('/?search=turned')).html).toContain(`by <bdi>${RLO}Acme</bdi>`)
    const publisher = (await page('/-/publishers/acme')).html
    expect(publisher).toContain(`<bdi>${RLO}Alice</bdi> <span class="muted">(owner)</span>`)
    expect(publisher).toContain(`<title>\u2068${RLO}Acme\u2069 (publisher) · registry-mirror</title>`)
    expect((await page(`/?search=${encodeURIComponent(RLO)}x`)).html).toContain(
      `<title>Nodes matching “\u2068${RLO}x\u2069” · registry-mirror</title>`,
    )
  })
})

describe('the publisher page', () => {
  test('shows the publisher, members by name without emails, and its nodes', async () => {
    t = await makeTestApp()
    await seedPages(t)
    const { status, html } = await page('/-/publishers/acme')
    expect(status).toBe(200)
    expect(html).toContain('<h1>acme name</h1>')
    expect(html).toContain('<li><bdi>ALICE</bdi> <span class="muted">(owner)</span></li>')
    expect(html).not.toContain('@example.com')
    expect([...html.matchAll(/<h3 id="node-([^"]+)">/g)].map((m) => m[1])).toEqual(['blur-pack', 'linux-tools', 'upscale-kit'])
  })
})

describe('the clients page', () => {
  test('gives commands for this registry for each client', async () => {
    t = await makeTestApp()
    const { html } = await page('/-/clients')
    expect(html).toContain('<pre id="registry-url">http://registry.test</pre>')
    expect(html).toContain('ENVIRONMENT=dev comfy node registry-install NODE_ID')
    expect(html).toContain('ENVIRONMENT=dev comfy node publish --token &quot;$PUBLISHER_TOKEN&quot;')
    expect(html).toContain('cnr_utils.base_url = &quot;http://registry.test&quot;')
    expect(html).toContain('NEXT_PUBLIC_BACKEND_URL=http://registry.test npm run build')
    expect(html).toContain('curl -s http://registry.test/nodes/NODE_ID/install')
    expect(html).toContain('python main.py --comfy-api-base http://registry.test')
  })

  test('at comfy-cli own address, no caveat is needed', async () => {
    t = await makeTestApp({ settings: { publicUrl: 'http://localhost:8080' } })
    const { status, html } = await page('/-/clients')
    // The page itself, with its commands for this address: an absence alone would pass on any answer.
    expect(status).toBe(200)
    expect(html).toContain('<pre id="registry-url">http://localhost:8080</pre>')
    expect(html).not.toContain('This registry is at')
  })
})

describe('under --public-url with a path prefix', () => {
  test('every link, asset, form action and download carries the prefix', async () => {
    t = await makeTestApp({ settings: { publicUrl: 'https://example.org/tools/registry' } })
    await seedPages(t)
    for (const path of [...PAGES, '/-/nope']) {
      const { html } = await page(path)
      const local = addresses(html).filter(
        (a) => !a.startsWith('#') && !a.startsWith('https://github.com') && !a.startsWith('https://gitlab'),
      )
      expect(local.length).toBeGreaterThan(0)
      expect({ path, outside: local.filter((a) => !a.startsWith('/tools/registry/')) }).toEqual({ path, outside: [] })
    }
    const node = (await page('/-/nodes/blur-pack')).html
    expect(node).toContain('href="/tools/registry/archives/acme/blur-pack/1.1.0/node.zip"')
    expect(node).toContain('href="/tools/registry/-/publishers/acme"')
    expect((await page('/')).html).toContain('action="/tools/registry/" data-results="/tools/registry/-/results"')
    expect((await page('/-/clients')).html).toContain('<pre id="registry-url">https://example.org/tools/registry</pre>')
    expect((await page('/-/nodes/Blur-Pack')).headers.get('location')).toBe('/tools/registry/-/nodes/blur-pack')
  })
})
