/**
 * A fetch whose body has all come, while the blob store still writes it out (the staged file's fsync, which may take
 * a second a MiB), is not given up for a download that needs a place: stopping it frees nothing (the place is freed
 * when the store returns), and took it out of the fetches in flight, so its archive's next download fetched it all
 * over again.
 */
import { afterEach, expect, test } from 'bun:test'
import type { BlobStore } from '../../src/blobs/blob-store'
import { randomPackZip } from '../support/archives'
import { firstStaging } from '../support/first-staging'
import { timed } from '../support/gone-upstream'
import { lazilyMirrored, type LazilyMirrored } from '../support/paced-archive'

let world: LazilyMirrored | undefined
afterEach(async () => {
  await world?.stop()
  world = undefined
})

const SYNCED = '/archives/acme/synced/1.0.0/node.zip'
const PACK = '/archives/acme/pack/1.0.0/node.zip'

/** The store, except that the first staging returns only once `synced` resolves, after reading the whole body. */
const firstSyncWaits = (store: BlobStore, synced: Promise<void>) =>
  firstStaging(store, async (body, stage) => {
    const staged = await stage(body)
    await synced
    return staged
  })

test('a fetch whose body has all come, its file still being synced, is not given up: fetched once', async () => {
  // 3 MiB: its final sync may take the timeout and 3 s more.
  const packs = { synced: randomPackZip(3_000_000), pack: randomPackZip(1000) }
  world = await lazilyMirrored(packs, { timeoutMs: 250, concurrency: 1 }) // one place; a download waits 1 s
  const { upstream, mirror } = world
  let sync = () => {}
  mirror.deps.blobs = firstSyncWaits(mirror.deps.blobs, new Promise<void>((resolve) => (sync = resolve)))

  // Its body all come, its file not synced after the whole wait of its download: nobody waits on it now.
  expect((await timed(mirror, SYNCED)).res.status).toBe(504)
  const waiting = timed(mirror, PACK) // needs the place, which the sync holds
  await Bun.sleep(200)
  sync()

  expect((await waiting).res.status).toBe(200)
  const served = await timed(mirror, SYNCED)
  expect(served.res.status).toBe(200)
  expect(served.body).toEqual(packs.synced)
  expect(upstream.requests.filter((p) => p === SYNCED)).toHaveLength(1)
  expect(mirror.logs.some((l) => l.includes('mirror.archive_fetch_given_up'))).toBe(false)
}, 30_000)
