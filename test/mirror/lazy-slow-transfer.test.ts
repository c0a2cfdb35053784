/**
 * Archives that arrive slowly on first download. A download waits a bounded time for its archive's fetch, whatever
 * the upstream does: a transfer slow but steady (within the pace, so not a failure) past 4 timeouts answers 504
 * saying it is still being fetched, and the fetch goes on, so a later download finds the archive stored, fetched
 * once. A fetch nobody waits on any more gives up its place to a download someone does wait on, and ends with serve.
 */
import { afterEach, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { startMirroring } from '../../src/serve-mirror'
import { randomPackZip } from '../support/archives'
import type { TestApp } from '../support/app'
import { eventually } from '../support/eventually'
import { timed } from '../support/gone-upstream'
import { lazilyMirrored, pacedArchive, type LazilyMirrored } from '../support/paced-archive'

let world: LazilyMirrored | undefined
afterEach(async () => {
  await world?.stop()
  world = undefined
})

const PATH = '/archives/acme/pack/1.0.0/node.zip'

/** Nothing staged is left in the mirror's data directory, and no blob intent. */
async function nothingLeftBehind(mirror: TestApp) {
  await eventually(async () => readdirSync(join(mirror.dir, 'tmp')).length === 0, { what: 'the staged bytes removed' })
  expect(await mirror.deps.db.selectFrom('blob_intents').selectAll().execute()).toEqual([])
}

test('a slow but steady first download: 504 "still being fetched" after 4 timeouts, then served, fetched once', async () => {
  const zip = randomPackZip(1_000_000)
  world = await lazilyMirrored({ pack: zip }, { timeoutMs: 250 }) // a download waits 1 s
  const { upstream, mirror } = world
  upstream.intercept = (url) => (url.pathname === PATH ? pacedArchive(zip, 60) : undefined) // some 2 s in all
  const first = await timed(mirror, PATH)
  expect(first.res.status).toBe(504)
  expect(first.body).toEqual({
    error: 'upstream_timeout',
    message: 'this archive is not stored here yet, and the upstream has not sent all of it within 1 s; it is still being fetched',
  })
  expect(first.res.headers.get('retry-after')).toBe('1')
  expect(first.ms).toBeLessThan(1_900)
  await eventually(async () => (await timed(mirror, PATH)).res.status === 200, { what: 'the archive stored' })
  expect((await timed(mirror, PATH)).body).toEqual(zip)
  expect(upstream.requests.filter((p) => p === PATH)).toHaveLength(1)
}, 30_000)

test('a transfer that fails after its download stopped waiting ends alone: the next download fetches it again', async () => {
  const zip = randomPackZip(1_000_000)
  // A download waits 1 s; a host found failing is asked again at once (the breaker is not what this is about).
  world = await lazilyMirrored({ pack: zip }, { timeoutMs: 250, attempts: 1, openMs: 1 })
  const { upstream, mirror } = world
  let cut = true
  // Steady for some 1.5 s, past the download's wait, then the connection goes.
  upstream.intercept = (url) => (url.pathname === PATH && cut ? pacedArchive(zip, 60, { failAfter: 25 }) : undefined)
  expect((await timed(mirror, PATH)).res.status).toBe(504)
  // Nobody waits on the fetch now: its failure must end it quietly (an unhandled rejection would fail this run).
  await eventually(async () => !mirror.deps.mirror?.inflight.size, { what: 'the failed fetch ended' })
  cut = false
  const again = await timed(mirror, PATH)
  expect(again.res.status).toBe(200)
  expect(again.body).toEqual(zip)
}, 30_000)

test('a download waited on takes the place of a fetch its download gave up on; that one is fetched again later', async () => {
  const slowZip = randomPackZip(1000)
  const zip = randomPackZip(1000)
  world = await lazilyMirrored({ slow: slowZip, pack: zip }, { timeoutMs: 250, concurrency: 1 }) // one place; waits 1 s
  const { upstream, mirror } = world
  const slow = '/archives/acme/slow/1.0.0/node.zip'
  let endless = true
  upstream.intercept = (url) => (url.pathname === slow && endless ? pacedArchive(slowZip, 50, { endless }) : undefined)
  expect((await timed(mirror, slow)).res.status).toBe(504) // given up on: the fetch goes on, holding the one place
  const waitedOn = await timed(mirror, PATH)
  expect(waitedOn.res.status).toBe(200)
  expect(waitedOn.body).toEqual(zip)
  expect(waitedOn.ms).toBeLessThan(900) // it waited its whole 1 s behind the endless one, and got a 504
  const givenUp = mirror.logs.map((l) => JSON.parse(l)).filter((l) => l.event === 'mirror.archive_fetch_given_up')
  expect(givenUp).toHaveLength(1)
  // The one given up on is fetched again by its next download, and nothing of the first fetch is left.
  endless = false
  const again = await timed(mirror, slow)
  expect(again.res.status).toBe(200)
  expect(again.body).toEqual(slowZip)
  expect(upstream.requests.filter((p) => p === slow)).toHaveLength(2)
  await nothingLeftBehind(mirror)
}, 30_000)

test('without a download waiting for its place, a fetch given up on by its download goes on to the end', async () => {
  const zip = randomPackZip(300_000)
  world = await lazilyMirrored({ pack: zip }, { timeoutMs: 250, concurrency: 1 })
  const { upstream, mirror } = world
  upstream.intercept = (url) => (url.pathname === PATH ? pacedArchive(zip, 200) : undefined) // some 2 s in all
  expect((await timed(mirror, PATH)).res.status).toBe(504)
  await eventually(async () => (await timed(mirror, PATH)).res.status === 200, { what: 'the archive stored' })
  expect((await timed(mirror, PATH)).body).toEqual(zip)
  expect(upstream.requests.filter((p) => p === PATH)).toHaveLength(1)
  expect(mirror.logs.some((l) => l.includes('mirror.archive_fetch_given_up'))).toBe(false)
}, 30_000)

test('stopping serve mid-fetch ends the transfer at once: nothing staged, no intent left, the download answered', async () => {
  const zip = randomPackZip(2_000_000)
  world = await lazilyMirrored({ pack: zip }) // serve's own client of first downloads, below
  const { upstream, mirror } = world
  let chunksSent = 0
  // Steady (within the pace), some 6 s in all.
  upstream.intercept = (url) => (url.pathname === PATH ? pacedArchive(zip, 100, { onChunk: () => chunksSent++ }) : undefined)
  const { config } = loadConfig({ flags: {}, env: {} })
  const mirroring = await startMirroring(mirror.deps, config!)
  const download = mirror.app.request(PATH)
  await eventually(async () => chunksSent >= 3, { what: 'the transfer under way' })
  const stopped = performance.now()
  await mirroring.stop()
  const answer = await download
  expect(answer.status).toBeGreaterThanOrEqual(500)
  expect(((await answer.json()) as { error: string }).error).toBeString()
  expect(performance.now() - stopped).toBeLessThan(2_000)
  const sentAtStop = chunksSent
  await Bun.sleep(500)
  // The upstream is asked for nothing more once the stop has gone through (a chunk in flight may still land).
  expect(chunksSent - sentAtStop).toBeLessThanOrEqual(1)
  expect(chunksSent).toBeLessThan(Math.ceil(zip.byteLength / (32 * 1024)))
  await nothingLeftBehind(mirror)
}, 30_000)
