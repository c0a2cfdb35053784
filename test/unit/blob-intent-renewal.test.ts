/**
 * A long write (an import) renews its blob intent in its batches' transactions: renewed, it outlives the day after
 * which a sweep drops intents; dropped meanwhile, its next batch fails rather than bind rows to bytes a sweep may
 * have deleted.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { dropExpiredIntents, intendBlobs } from '../../src/services/blob-intent'
import { INTENT_TTL_MS } from '../../src/store/blob-intents'
import { openStore, type Store } from '../../src/store/db'

const HOUR = 3600_000
const SHA = 'a'.repeat(64)
let db: Store
let clock: { now: Date }
const deps = () => ({ db, now: () => clock.now })
const at = (ms: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + ms)

beforeEach(async () => {
  db = await openStore(':memory:')
  clock = { now: at(0) }
})
afterEach(() => db.destroy())

test('an intent renewed two hours in is not dropped a day after it was recorded, and settles', async () => {
  const intent = await intendBlobs(deps(), [SHA])
  await db.transaction().execute((trx) => intent.renew(trx, at(2 * HOUR).toISOString()))
  clock.now = at(INTENT_TTL_MS + HOUR)
  expect(await dropExpiredIntents(deps())).toBe(0)
  await db.transaction().execute((trx) => intent.settle(trx))
  expect(await db.selectFrom('blob_intents').selectAll().execute()).toEqual([])
})

test('an intent dropped as expired fails its next renewal and its settling with a 503', async () => {
  const intent = await intendBlobs(deps(), [SHA])
  clock.now = at(INTENT_TTL_MS + HOUR)
  expect(await dropExpiredIntents(deps())).toBe(1)
  const renew = db.transaction().execute((trx) => intent.renew(trx, clock.now.toISOString()))
  await expect(renew).rejects.toMatchObject({ status: 503, code: 'storage_unavailable' })
  await expect(db.transaction().execute((trx) => intent.settle(trx))).rejects.toMatchObject({ status: 503 })
})
