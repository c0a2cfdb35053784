/**
 * A download that joins a fetch still waiting for one of the client's places takes a place from a fetch nobody waits
 * on, as a download starting a fetch does: the fetch it joins (a breaker's probe among them) would otherwise wait
 * behind an endless transfer its download gave up on, and every later download of that archive with it.
 */
import { afterEach, expect, test } from 'bun:test'
import { randomPackZip } from '../support/archives'
import { timed } from '../support/gone-upstream'
import { lazilyMirrored, pacedArchive, type LazilyMirrored } from '../support/paced-archive'

let world: LazilyMirrored | undefined
afterEach(async () => {
  await world?.stop()
  world = undefined
})

const SLOW = '/archives/acme/slow/1.0.0/node.zip'
const PACK = '/archives/acme/pack/1.0.0/node.zip'

test('a download joining a fetch that waits for a place ends a fetch nobody waits on: the archive comes at once', async () => {
  const packs = { slow: randomPackZip(1000), pack: randomPackZip(1000) }
  world = await lazilyMirrored(packs, { timeoutMs: 250, concurrency: 1 }) // one place; a download waits 1 s
  const { upstream, mirror } = world
  upstream.intercept = (url) => (url.pathname === SLOW ? pacedArchive(packs.slow, 50, { endless: true }) : undefined)

  const slow = timed(mirror, SLOW) // takes the one place, and is waited on while the next fetch starts
  await Bun.sleep(200)
  const first = await timed(mirror, PACK) // a new fetch: every place taken, none given up (the endless one is waited on)
  expect(first.res.status).toBe(504)
  expect((await slow).res.status).toBe(504) // nobody waits on the endless one now

  const joined = await timed(mirror, PACK) // joins the fetch still waiting for the place
  expect(joined.res.status).toBe(200)
  expect(joined.body).toEqual(packs.pack)
  expect(joined.ms).toBeLessThan(900)
  const givenUp = mirror.logs.map((l) => JSON.parse(l)).filter((l) => l.event === 'mirror.archive_fetch_given_up')
  expect(givenUp).toHaveLength(1)
}, 30_000)

test('a fetch waiting for a place holds none: never the one given up, only one whose body is coming', async () => {
  const packs = { slow: randomPackZip(1000), pack: randomPackZip(1000) }
  world = await lazilyMirrored(packs, { timeoutMs: 250, concurrency: 1 }) // one place; a download waits 1 s
  const { upstream, mirror } = world
  upstream.intercept = (url) => (url.pathname === SLOW ? pacedArchive(packs.slow, 50, { endless: true }) : undefined)

  const slow = timed(mirror, SLOW) // takes the one place
  await Bun.sleep(200)
  expect((await timed(mirror, PACK)).res.status).toBe(504) // waits for the place; nobody waits on it now
  expect((await slow).res.status).toBe(504)
  // The endless one downloaded again (it is waited on): the fetch waiting for the place is not ended for it.
  expect((await timed(mirror, SLOW)).res.status).toBe(504)
  expect(mirror.logs.some((l) => l.includes('mirror.archive_fetch_given_up'))).toBe(false)

  // Nobody waits on the endless one now: the next download of the waiting one takes its place, and is served.
  const served = await timed(mirror, PACK)
  expect(served.res.status).toBe(200)
  expect(served.body).toEqual(packs.pack)
  const givenUp = mirror.logs.map((l) => JSON.parse(l)).filter((l) => l.event === 'mirror.archive_fetch_given_up')
  expect(givenUp).toHaveLength(1)
}, 30_000)
