/**
 * A mirror takes the upstream's counts into its nodes' narrow rows (schema 17): every node mirrored gets its row, a
 * count changed upstream is written there, reaches the reads and the feed, and a pass with nothing changed writes none.
 */
import { afterEach, expect, test } from 'bun:test'
import { feedPosition, listChanges } from '../../src/store/changes'
import { makeTestApp, type TestApp } from '../support/app'
import { sync } from '../support/mirror'
import { strayCounts } from '../support/node-counts'
import { fakeNodes, startPublicUpstream, type PublicUpstream } from '../support/public-upstream'

let upstream: PublicUpstream
let mirror: TestApp
afterEach(async () => {
  upstream?.stop()
  await mirror?.cleanup()
})

test("the upstream's counts land in the narrow rows, and a changed count is fed and read", async () => {
  upstream = startPublicUpstream(fakeNodes(12))
  mirror = await makeTestApp()
  await sync(mirror, upstream.url)
  const db = mirror.deps.db
  expect(await strayCounts(db)).toEqual([])
  const node = upstream.nodes[3]!
  const stored = () => db.selectFrom('node_downloads').select('downloads').where('node_id', '=', node.id).executeTakeFirstOrThrow()
  expect((await stored()).downloads).toBe(10 * node.stars)

  const head = (await feedPosition(db)).lastSerial
  expect((await sync(mirror, upstream.url, { full: true })).changed.nodes).toBe(0)
  expect((await feedPosition(db)).lastSerial).toBe(head)

  node.stars += 4
  const again = await sync(mirror, upstream.url, { full: true })
  expect(again.changed.nodes).toBe(1)
  expect((await stored()).downloads).toBe(10 * node.stars)
  expect((await mirror.call('GET', `/nodes/${node.id}`)).body.downloads).toBe(10 * node.stars)
  expect((await listChanges(db, head, 100)).filter((c) => c.kind === 'node').map((c) => c.entity_id)).toEqual([node.id])
  expect(await strayCounts(db)).toEqual([])
})
