/**
 * A fetch whose body has all come holds none of the client's places any more (it is being checked and stored): it is
 * not given up for a download that needs a place, which would free nothing, and take it out of the fetches in flight
 * so that its archive's next download fetched it all over again.
 */
import { afterEach, expect, test } from 'bun:test'
import type { BlobStore } from '../../src/blobs/blob-store'
import { randomPackZip } from '../support/archives'
import { firstStaging } from '../support/first-staging'
import { timed } from '../support/gone-upstream'
import { lazilyMirrored, pacedArchive, type LazilyMirrored } from '../support/paced-archive'

let world: LazilyMirrored | undefined
afterEach(async () => {
  await world?.stop()
  world = undefined
})

const STORED = '/archives/acme/stored/1.0.0/node.zip'
const ENDLESS = '/archives/acme/endless/1.0.0/node.zip'
const PACK = '/archives/acme/pack/1.0.0/node.zip'

/** The store, except that the first bytes staged are committed only once `opened` resolves (a slow disk). */
const firstCommitWaits = (store: BlobStore, opened: Promise<void>) =>
  firstStaging(store, async (body, stage) => {
    const staged = await stage(body)
    return { ...staged, commit: async () => (await opened, await staged.commit()) }
  })

test('a fetch storing a body that has all come is not given up: its next download joins it, fetched once', async () => {
  const packs = { stored: randomPackZip(1000), endless: randomPackZip(1000), pack: randomPackZip(1000) }
  world = await lazilyMirrored(packs, { timeoutMs: 250, concurrency: 1 }) // one place; a download waits 1 s
  const { upstream, mirror } = world
  upstream.intercept = (url) => (url.pathname === ENDLESS ? pacedArchive(packs.endless, 50, { endless: true }) : undefined)
  let open = () => {}
  mirror.deps.blobs = firstCommitWaits(mirror.deps.blobs, new Promise<void>((resolve) => (open = resolve)))

  // Its body all come, its bytes not stored yet after the whole wait of its download: nobody waits on it now.
  expect((await timed(mirror, STORED)).res.status).toBe(504)
  const endless = timed(mirror, ENDLESS) // takes the one place, and is waited on
  await Bun.sleep(100)
  const waiting = timed(mirror, PACK) // needs the place: there is none to take
  await Bun.sleep(100)
  const again = timed(mirror, STORED)
  await Bun.sleep(100)
  open()

  const served = await again
  expect(served.res.status).toBe(200)
  expect(served.body).toEqual(packs.stored)
  expect(upstream.requests.filter((p) => p === STORED)).toHaveLength(1)
  expect(mirror.logs.some((l) => l.includes('mirror.archive_fetch_given_up'))).toBe(false)
  await Promise.all([endless, waiting])
}, 30_000)
