/** The web pages' markup as assistive technology reads it: no empty lists, names and marks that say what things are. */
import { afterEach, describe, expect, test } from 'bun:test'
import { addPublisher, addUser, makeTestApp, type TestApp } from '../support/app'
import { pageOf } from '../support/web-pages'

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
