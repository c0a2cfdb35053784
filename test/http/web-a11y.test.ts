/** The web pages' markup as assistive technology reads it: no empty lists, names and marks that say what things are. */
import { afterEach, describe, expect, test } from 'bun:test'
import { addPublisher, addUser, makeTestApp, type TestApp } from '../support/app'
import { pageOf, seedPages } from '../support/web-pages'

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
    expect(await title('/?limit=1&page=2')).toBe('Browse nodes (page 2) · registry-mirror')
  })
})
