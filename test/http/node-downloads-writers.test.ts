/**
 * Every write of a node keeps its narrow row of counts (schema 17) whole: a fixture's new and edited nodes, a publish,
 * an admin's ranking. The row holds the node's count, read by every reader, and a copy of its ranking that the SQL
 * search's list order reads.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { loadFixture } from '../../src/services/fixture'
import { queryNodeIds } from '../../src/store/node-query'
import { addPublisher, addPublisherToken, addUser, makeTestApp, publish, type TestApp } from '../support/app'
import { strayCounts } from '../support/node-counts'

const EXAMPLE = readFileSync(new URL('../fixtures/example-fixture.json', import.meta.url), 'utf8')
const ADMIN = 'ci-token-admin-000000000000003'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

async function load(fixture: unknown) {
  const result = await loadFixture(t.deps, JSON.stringify(fixture), 'test.json')
  if (!result.ok) throw new Error(result.problems.join('\n'))
}

const counted = (id: string) =>
  t.deps.db.selectFrom('node_downloads').select(['search_ranking', 'downloads']).where('node_id', '=', id).executeTakeFirst()
const sqlOrder = async () => (await queryNodeIds(t.deps.db, { offset: 0, limit: 10, includeBanned: false })).ids

test('a fixture, a publish and an admin ranking each leave every node its narrow row, with its count and ranking', async () => {
  const fixture = JSON.parse(EXAMPLE)
  await load(fixture)
  expect(await strayCounts(t.deps.db)).toEqual([])
  expect(await counted('upscale-tools')).toEqual({ search_ranking: 5, downloads: 0 })
  const blur = (await t.call('GET', '/nodes/blur-pack')).body.downloads
  expect((await counted('blur-pack'))?.downloads).toBe(blur)

  // The file edited: a count and a ranking change, and they reach the reads and the order.
  const upscale = fixture.nodes.find((n: { id: string }) => n.id === 'upscale-tools')
  Object.assign(upscale, { downloads: 7, search_ranking: 0 })
  await load(fixture)
  expect(await strayCounts(t.deps.db)).toEqual([])
  expect(await counted('upscale-tools')).toEqual({ search_ranking: 0, downloads: 7 })
  expect((await t.call('GET', '/nodes/upscale-tools')).body).toMatchObject({ downloads: 7, search_ranking: 0 })

  const alice = await addUser(t, 'newcomer')
  await addPublisher(t, alice, 'alicepub')
  const pat = await addPublisherToken(t, alice, 'alicepub')
  expect((await publish(t, { pat, publisher: 'alicepub', node: 'fresh-pack', version: '1.0.0' })).status).toBe(201)
  expect(await strayCounts(t.deps.db)).toEqual([])
  expect(await counted('fresh-pack')).toEqual({ search_ranking: 0, downloads: 0 })

  const edit = await t.call('PUT', '/publishers/alicepub/nodes/fresh-pack', { token: ADMIN, body: { search_ranking: 9 } })
  expect(edit.status).toBe(200)
  expect(await strayCounts(t.deps.db)).toEqual([])
  expect((await sqlOrder())[0]).toBe('fresh-pack')
})
