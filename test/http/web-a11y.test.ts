/** The web pages' markup as assistive technology reads it: no empty lists, names and marks that say what things are. */
import { afterEach, describe, expect, test } from 'bun:test'
import { addPublisher, addUser, makeTestApp, type TestApp } from '../support/app'
import { PAGES, pageOf, seedPages } from '../support/web-pages'

let t: TestApp
afterEach(async () => {
  await t?.cleanup()
})

const page = (path: string) => pageOf(t, path)

describe('the publisher page', () => {
  test('a publisher without website, source or support has no list of links (a screen reader announced it empty)', async () => {
    t = await makeTestApp()
    await addPublisher(t, await addUser(t, 'alice'), 'quiet')
    const { status, html } = await page('/-/publishers/quiet')
    expect(status).toBe(200)
    expect(html).not.toContain('aria-label="Links"')
    expect(html).not.toMatch(/<ul[^>]*><\/ul>/)
  })

  test('one with a website lists it, named', async () => {
    t = await makeTestApp()
    const token = await addUser(t, 'alice')
    await addPublisher(t, token, 'acme')
    await t.call('PUT', '/publishers/acme', { token, body: { website: 'https://acme.example' } })
    const { html } = await page('/-/publishers/acme')
    expect(html).toContain('<ul class="meta" aria-label="Links"><li>Website: <a href="https://acme.example"')
  })
})

describe('the search page', () => {
  test('its title says what it shows: a keyword, filters, which page of results', async () => {
    t = await makeTestApp()
    await seedPages(t)
    const title = async (path: string) => (await page(path)).html.match(/<title>([^<]*)<\/title>/)![1]
    expect(await title('/')).toBe('Browse nodes · registry-mirror')
    expect(await title('/?search=blur')).toBe('Nodes matching “\u2068blur\u2069” · registry-mirror')
    // A host node class link from a node page lands here: the title said "Browse nodes" as for the whole list.
    expect(await title('/?host_node_search=MotionBlur')).toBe('Filtered nodes · registry-mirror')
    expect(await title('/?search=blur&supported_os=MacOS')).toBe('Nodes matching “\u2068blur\u2069”, filtered · registry-mirror')
    expect(await title('/?limit=1&page=2')).toBe('Browse nodes, page 2 · registry-mirror')
  })
})

describe('the search form sent without the script', () => {
  test("its empty fields are dropped by a redirect to the same search, under the public URL's path too", async () => {
    t = await makeTestApp({ settings: { publicUrl: 'https://example.org/tools/registry' } })
    const form = '/?search=&repository_url_search=github.com%2Facme&host_node_search=+&supported_os=&supported_accelerator='
    const sent = await page(form)
    expect(sent.status).toBe(303)
    expect(sent.headers.get('location')).toBe('/tools/registry/?repository_url_search=github.com%2Facme')
    expect((await page('/?search=&supported_os=')).headers.get('location')).toBe('/tools/registry/')
    // Nothing blank, nothing to drop: the page itself.
    expect((await page('/?search=blur&page=2')).status).toBe(200)
    expect((await page('/')).status).toBe(200)
  })
})

describe('every page', () => {
  test('ids are unique, every aria-labelledby and label names one, every field is labelled, the skip link leads to main', async () => {
    t = await makeTestApp()
    await seedPages(t)
    for (const path of [...PAGES, '/?search=no-such-thing', '/-/nodes/no-such-node', '/?page=x']) {
      const { html } = await page(path)
      const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!)
      expect({ path, repeated: ids.filter((id, i) => ids.indexOf(id) !== i) }).toEqual({ path, repeated: [] })
      const named = [...html.matchAll(/\s(?:aria-labelledby|for|data-copy)="([^"]+)"/g)].map((m) => m[1]!)
      expect({ path, missing: named.filter((id) => !ids.includes(id)) }).toEqual({ path, missing: [] })
      const fields = [...html.matchAll(/<input(?![^>]*type="hidden")[^>]*\sid="([^"]+)"/g)].map((m) => m[1]!)
      expect({ path, unlabelled: fields.filter((id) => !html.includes(`<label for="${id}">`)) }).toEqual({ path, unlabelled: [] })
      if (path.startsWith('/-/results')) continue
      expect(html).toContain('<body><a class="skip" href="#main">Skip to content</a>')
      expect(html).toMatch(/<header class="site-header">[^]*<main id="main"[^]*<\/main><footer class="site-footer">/)
    }
  })
})

describe('node and publisher pages', () => {
  test('past the first page of versions or nodes, the title says which page', async () => {
    t = await makeTestApp()
    await seedPages(t)
    const title = async (path: string) => (await page(path)).html.match(/<title>([^<]*)<\/title>/)![1]
    expect(await title('/-/nodes/blur-pack')).toBe('\u2068Blur Pack\u2069 (blur-pack) · registry-mirror')
    expect(await title('/-/nodes/blur-pack?page=2')).toBe('\u2068Blur Pack\u2069 (blur-pack), versions page 2 · registry-mirror')
    expect(await title('/-/publishers/acme')).toBe('\u2068acme name\u2069 (publisher) · registry-mirror')
    expect(await title('/-/publishers/acme?page=2')).toBe('\u2068acme name\u2069 (publisher), page 2 · registry-mirror')
  })
})
