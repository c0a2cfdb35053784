/**
 * Free-form objects clients send (translations, a license object, a video provider's report): nested too deep or too
 * large, they get a 400 naming the field, never a 500 from a serializer's overflowing stack; what is taken is what a
 * mirror of this registry takes too.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { MAX_JSON_DEPTH, MAX_OBJECT_JSON, MAX_TEXT_DEPTH } from '../../src/domain/json-bounds'
import { aliceWithPublisher, makeTestApp, publish, type TestApp } from '../support/app'
import { nestedJson as nested } from '../support/nested-json'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

/** A node body whose translations are the given JSON text. */
const nodeWith = (id: string, translations: string) => `{"id":"${id}","name":"N","translations":${translations}}`
/** Translations of `keys` languages, each a short name: about 28 characters of JSON a key. */
const wide = (keys: number) =>
  JSON.stringify(Object.fromEntries(Array.from({ length: keys }, (_, i) => [`l${i}`, { name: 'x'.repeat(10) }])))

describe('free-form objects are bounded before they are stored', () => {
  test('translations nested deeper than they may be, within what a body may: 400 naming the field, the node not created', async () => {
    const { token } = await aliceWithPublisher(t)
    const res = await t.call('POST', '/publishers/acme/nodes', { token, body: nodeWith('deep', nested(MAX_TEXT_DEPTH - 2)) })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('translations')
    expect(res.body.message).toContain(`nests deeper than ${MAX_JSON_DEPTH} levels`)
    expect((await t.call('GET', '/nodes/deep')).status).toBe(404)
  })

  test('a body nested deeper than a body may is refused unparsed, from anyone: 400, the node not created, the server answering', async () => {
    const { token } = await aliceWithPublisher(t)
    const tooDeep = `body: nests deeper than ${MAX_TEXT_DEPTH} levels of arrays and objects`
    const res = await t.call('POST', '/publishers/acme/nodes', { token, body: nodeWith('deep', nested(60_000)) })
    expect([res.status, res.body.message]).toEqual([400, tooDeep])
    expect((await t.call('GET', '/nodes/deep')).status).toBe(404)
    // Half a million brackets on the public bulk lookup, with no credentials at all.
    const brackets = `${'['.repeat(500_000)}${']'.repeat(500_000)}`
    const anonymous = await t.call('POST', '/bulk/nodes/versions', { body: brackets })
    expect([anonymous.status, anonymous.body.message]).toEqual([400, tooDeep])
    // At the bound (the body itself the first level), it is parsed, and refused for what it holds.
    const within = await t.call('POST', '/publishers/acme/nodes', { token, body: nodeWith('deep', nested(MAX_TEXT_DEPTH - 1)) })
    expect(within.body.message).toContain(`translations: nests deeper than ${MAX_JSON_DEPTH} levels`)
    expect((await t.call('GET', '/health')).status).toBe(200)
  })

  test(`translations of ${MAX_JSON_DEPTH} levels are taken and read back; one level more is refused`, async () => {
    const { token } = await aliceWithPublisher(t)
    const ok = await t.call('POST', '/publishers/acme/nodes', { token, body: nodeWith('just', nested(MAX_JSON_DEPTH)) })
    expect(ok.status).toBe(201)
    expect(JSON.stringify((await t.call('GET', '/nodes/just')).body.translations)).toBe(nested(MAX_JSON_DEPTH))
    const over = await t.call('POST', '/publishers/acme/nodes', { token, body: nodeWith('over', nested(MAX_JSON_DEPTH + 1)) })
    expect(over.status).toBe(400)
  })

  test('translations larger than a mirror takes are refused, on creation, on edit and in a publish', async () => {
    const { token, pat } = await aliceWithPublisher(t)
    const big = wide(Math.ceil(MAX_OBJECT_JSON / 20))
    expect(big.length).toBeGreaterThan(MAX_OBJECT_JSON)
    const created = await t.call('POST', '/publishers/acme/nodes', { token, body: nodeWith('wide', big) })
    expect(created.status).toBe(400)
    expect(created.body.message).toContain(`larger than ${MAX_OBJECT_JSON} characters`)
    expect((await t.call('POST', '/publishers/acme/nodes', { token, body: nodeWith('fits', wide(100)) })).status).toBe(201)
    const edited = await t.call('PUT', '/publishers/acme/nodes/fits', { token, body: nodeWith('fits', big) })
    expect(edited.status).toBe(400)
    expect((await t.call('GET', '/nodes/fits')).body.translations).toEqual(JSON.parse(wide(100)))
    const published = await publish(t, { pat, node: 'pub', version: '1.0.0', nodeFields: { translations: JSON.parse(big) } })
    expect(published.status).toBe(400)
    expect(published.body.message).toContain('translations')
  })

  test('a license object nested too deep is refused like translations', async () => {
    const { token } = await aliceWithPublisher(t)
    const res = await t.call('POST', '/publishers/acme/nodes', {
      token,
      body: `{"id":"lic","name":"N","license":${nested(MAX_TEXT_DEPTH - 1)}}`,
    })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('license')
  })

  test('a body nested as deep as a body may with a NUL at the bottom: 400 naming where', async () => {
    const { token } = await aliceWithPublisher(t)
    const deep = `${'['.repeat(MAX_TEXT_DEPTH - 3)}"\\u0000"${']'.repeat(MAX_TEXT_DEPTH - 3)}`
    const res = await t.call('POST', '/publishers/acme/nodes', { token, body: `{"id":"deep","name":"N","translations":{"de":${deep}}}` })
    expect(res.status).toBe(400)
    expect(res.body.message).toStartWith('body.translations.de.0.0.0.')
    expect(res.body.message).toEndWith(': text may not hold a NUL character (\\u0000)')
    expect((await t.call('GET', '/health')).status).toBe(200)
  })
})
