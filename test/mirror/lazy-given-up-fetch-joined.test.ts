/**
 * A fetch given up (nobody waited on it, and a download that is waited on needed its place) is out of the table of
 * fetches in flight from the moment it is stopped: a download of its archive arriving while the stopped transfer
 * winds down starts a fresh fetch, rather than joining the stopped one and answering 502 for it.
 */
import { afterEach, expect, test } from 'bun:test'
import type { BlobStore } from '../../src/blobs/blob-store'
import type { LogFields } from '../../src/log'
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

/**
 * The store's own staging, except that a staging that fails (a transfer stopped) reports it only once `opened`
 * resolves: the stopped fetch stays under way, as long as the test wants, after it was stopped.
 */
function failuresHeld(store: BlobStore, opened: Promise<void>): BlobStore {
  return Object.assign(Object.create(store) as BlobStore, {
    stage: (body: ReadableStream<Uint8Array>, maxBytes: number) =>
      store.stage(body, maxBytes).catch(async (err: unknown) => {
        await opened
        throw err
      }),
  })
}

test('a download arriving while a given-up fetch winds down starts a fresh fetch: served, not 502 "stopped"', async () => {
  const packs = { slow: randomPackZip(1000), pack: randomPackZip(1000) }
  world = await lazilyMirrored(packs, { timeoutMs: 250, concurrency: 1 }) // one place; a download waits 1 s
  const { upstream, mirror } = world
  let endless = true
  upstream.intercept = (url) => (url.pathname === SLOW && endless ? pacedArchive(packs.slow, 50, { endless }) : undefined)
  let open = () => {}
  mirror.deps.blobs = failuresHeld(mirror.deps.blobs, new Promise<void>((resolve) => (open = resolve)))

  // Given up on by its download: the endless fetch goes on, holding the one place.
  expect((await timed(mirror, SLOW)).res.status).toBe(504)
  endless = false // asked again, the upstream sends it whole

  // The next download of it comes in the very moment the fetch is stopped for a download that needs its place.
  let again: ReturnType<typeof timed> | undefined
  const log = mirror.deps.log
  mirror.deps.log = Object.assign(Object.create(log), {
    info(event: string, fields?: LogFields) {
      log.info(event, fields)
      if (event === 'mirror.archive_fetch_given_up') again = timed(mirror, SLOW)
    },
  })
  const waitedOn = timed(mirror, PACK)
  await Bun.sleep(200) // the stopped fetch still under way all this time
  expect(again).toBeDefined()
  open()

  expect((await waitedOn).res.status).toBe(200)
  const answer = await again!
  expect(answer.res.status).toBe(200)
  expect(answer.body).toEqual(packs.slow)
  expect(upstream.requests.filter((p) => p === SLOW)).toHaveLength(2)
  expect(mirror.logs.some((l) => l.includes('mirror.archive_fetch_failed'))).toBe(false)
}, 30_000)
