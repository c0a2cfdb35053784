/**
 * underBlobIntent, the one way writers hold a blob intent: it is gone after the write that names the bytes commits,
 * and released when the work fails anywhere (its write's transaction rolled back with the intent's deletion in it) or
 * ends without a write; an intent that expired meanwhile fails the write, whose rows are then not written.
 */
import { afterEach, expect, test } from 'bun:test'
import { dropExpiredIntents, underBlobIntent } from '../../src/services/blob-intent'
import { INTENT_TTL_MS } from '../../src/store/blob-intents'
import { makeTestApp, type TestApp } from '../support/app'

let t: TestApp
afterEach(() => t.cleanup())

const SHA = 'b'.repeat(64)
const intents = () => t.deps.db.selectFrom('blob_intents').select('sha256').execute()
const audited = () => t.deps.db.selectFrom('audit_log').select('target_id').execute()
const auditRow = (id: string) => ({ action: 'test.row', targetKind: 'fixture', targetId: id })

test('held while the work runs, gone with the write that commits', async () => {
  t = await makeTestApp()
  const held = await underBlobIntent(t.deps, [SHA, SHA], async (intent) => {
    const during = await intents()
    await intent.write(async (w) => w.audit(undefined, auditRow('written')))
    return during
  })
  expect(held).toEqual([{ sha256: SHA }])
  expect(await intents()).toEqual([])
  expect(await audited()).toEqual([{ target_id: 'written' }])
})

test('released when the work throws before its write, or ends without one', async () => {
  t = await makeTestApp()
  const failed = underBlobIntent(t.deps, [SHA], async () => {
    throw new Error('staging failed')
  })
  await expect(failed).rejects.toThrow('staging failed')
  expect(await intents()).toEqual([])
  expect(await underBlobIntent(t.deps, [SHA], async () => 'bytes swept meanwhile')).toBe('bytes swept meanwhile')
  expect(await intents()).toEqual([])
})

test('released when the write itself fails: its settling rolled back with it', async () => {
  t = await makeTestApp()
  const failed = underBlobIntent(t.deps, [SHA], (intent) =>
    intent.write(async () => {
      throw new Error('version banned meanwhile')
    }),
  )
  await expect(failed).rejects.toThrow('version banned meanwhile')
  expect(await intents()).toEqual([])
})

test('expired meanwhile: the write fails with a 503 and writes nothing', async () => {
  t = await makeTestApp()
  const failed = underBlobIntent(t.deps, [SHA], async (intent) => {
    const recorded = t.clock.now
    t.clock.now = new Date(recorded.getTime() + INTENT_TTL_MS + 1000)
    expect(await dropExpiredIntents(t.deps)).toBe(1)
    await intent.write(async (w) => w.audit(undefined, auditRow('late')))
  })
  await expect(failed).rejects.toMatchObject({ status: 503, code: 'storage_unavailable' })
  expect(await audited()).toEqual([])
})
