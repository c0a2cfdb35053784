/**
 * Input bounds at their exact edges, each found untested by breaking it (a hand-made mutant survived the suite): list
 * and string limits of node and version fields, the version string, bulk lookups, paging spellings, publisher ids and
 * names, moderation reasons and repository host tokens.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { addUser, aliceWithPublisher, makeTestApp, publish, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp({ engine: 'store' })))
afterEach(() => t.cleanup())

describe('node and version fields', () => {
  test('tags: at most 50, each at most 100 characters', async () => {
    const { pat } = await aliceWithPublisher(t)
    const tags = (n: number, length = 5) => Array.from({ length: n }, (_, i) => `${i}`.padEnd(length, 'x'))
    const many = await publish(t, { pat, node: 'pack', version: '1.0.0', nodeFields: { tags: tags(51) } })
    expect(many).toMatchObject({ status: 400, body: { message: 'body.node.tags: must have at most 50 items' } })
    const long = await publish(t, { pat, node: 'pack', version: '1.0.0', nodeFields: { tags: tags(1, 101) } })
    expect(long).toMatchObject({ status: 400, body: { message: 'body.node.tags.0: items must be at most 100 characters' } })
    expect((await publish(t, { pat, node: 'pack', version: '1.0.0', nodeFields: { tags: tags(50, 100) } })).status).toBe(201)
  })

  test('the version string: at most 100 characters, also when it is a valid semantic version', async () => {
    const { pat } = await aliceWithPublisher(t)
    const version = (length: number) => `1.0.0-${'a'.repeat(length - 6)}`
    const long = await publish(t, { pat, node: 'pack', version: version(101) })
    expect(long).toMatchObject({ status: 400, body: { message: 'body.node_version.version: must be at most 100 characters' } })
    expect((await publish(t, { pat, node: 'pack', version: version(100) })).status).toBe(201)
  })
})

describe('bulk lookups', () => {
  test('at most 500 items', async () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ node_id: `n${i}`, version: '1.0.0' }))
    const over = await t.call('POST', '/bulk/nodes/versions', { body: { node_versions: items(501) } })
    expect(over).toMatchObject({ status: 400, body: { message: 'body.node_versions: must have at most 500 items' } })
    expect((await t.call('POST', '/bulk/nodes/versions', { body: { node_versions: items(500) } })).status).toBe(200)
  })
})

describe('paging parameters', () => {
  test.each(['page=2.0', 'limit=10.0', 'page=1.', 'limit=1e1'])('%s is not an integer as written: 400', async (query) => {
    const res = await t.call('GET', `/nodes/search?${query}`)
    expect(res.status).toBe(400)
  })
})

describe('publishers', () => {
  test('the id check: 64 characters are available, 65 are 400', async () => {
    expect((await t.call('GET', `/publishers/validate?username=${'a'.repeat(64)}`)).body).toEqual({ isAvailable: true })
    const long = await t.call('GET', `/publishers/validate?username=${'a'.repeat(65)}`)
    expect(long).toMatchObject({ status: 400, body: { error: 'invalid_publisher_id', message: 'id: at most 64 characters' } })
  })

  test('a name of blanks is refused on update, and the name is kept', async () => {
    const { token } = await aliceWithPublisher(t)
    expect(await t.call('PUT', '/publishers/acme', { token, body: { name: '   ' } })).toMatchObject({
      status: 400,
      body: { message: 'name: must not be empty' },
    })
    expect((await t.call('GET', '/publishers/acme')).body.name).toBe('acme name')
  })
})

describe('what an admin or an owner sends along', () => {
  test('a moderation reason: at most 1000 characters', async () => {
    const admin = await addUser(t, 'ada', { admin: true })
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const long = await t.call('POST', '/publishers/acme/nodes/pack/ban', { token: admin, body: { reason: 'r'.repeat(1001) } })
    expect(long).toMatchObject({ status: 400, body: { message: 'body.reason: must be at most 1000 characters' } })
    expect((await t.call('GET', '/nodes/pack')).status).toBe(200)
  })

  test('a repository host token holds visible ASCII only (it goes into a header)', async () => {
    const { token } = await aliceWithPublisher(t)
    for (const bad of ['gh-tok\u00e9n', 'gh\ttoken']) {
      const res = await t.call('POST', '/publishers/acme/nodes/free/claim-my-node', { token, body: { REPOHOST_TOKEN: bad } })
      expect(res).toMatchObject({ status: 400, body: { message: 'body.REPOHOST_TOKEN: must be a token (visible ASCII characters only)' } })
    }
  })
})
