/**
 * What a writer holds from before it makes bytes visible (or binds a row to bytes already stored) until the
 * transaction that writes its row: an intent that `blobs sweep` respects (store/blob-intents.ts says how).
 */
import type { Kysely } from 'kysely'
import { newId } from '../domain/ids'
import { storageUnavailable } from '../errors'
import { deleteIntents, deleteIntentsBefore, INTENT_TTL_MS, insertIntents } from '../store/blob-intents'
import type { Store } from '../store/db'
import type { DB } from '../store/schema'
import { inWriteTurn } from './write-turn'

export interface BlobIntent {
  /**
   * In the transaction that writes the rows naming the bytes: drops the intent. Throws (a 503: try again) when it
   * expired meanwhile, for then a sweep may have deleted the bytes, and no row may point at them.
   */
  settle(trx: Kysely<DB>): Promise<void>
  /**
   * In a transaction that writes some of the rows, of a long write (an import): renews the intent, or throws as
   * settle.
   */
  renew(trx: Kysely<DB>, now: string): Promise<void>
  /**
   * No row will be written (a refused upload, a failure): drops the intent, best effort (an expired one goes anyway).
   */
  release(): Promise<void>
}

const expired = () => storageUnavailable()

/** How long after its last renewal an intent is renewed again: far below INTENT_TTL_MS, whatever the clocks' skew. */
const RENEW_AFTER_MS = 3600_000

/** Records an intent for these hashes (before their commit, or before the writer looks for them in the store). */
export async function intendBlobs(deps: { db: Store; now(): Date }, sha256s: readonly string[]): Promise<BlobIntent> {
  const id = newId()
  const count = new Set(sha256s).size
  const at = deps.now()
  await inWriteTurn(deps.db, () => insertIntents(deps.db, id, sha256s, at.toISOString()))
  let renewed = at.getTime()
  return {
    async settle(trx) {
      if ((await deleteIntents(trx, id)) < count) throw expired()
    },
    async renew(trx, now) {
      // Far from expiring (by any instance's clock): nothing to write. A transaction that fails after renewing ends
      // the long write it belongs to, so the time is taken as renewed from here.
      if (Date.parse(now) - renewed < RENEW_AFTER_MS) return
      const result = await trx.updateTable('blob_intents').set({ created_at: now }).where('id', '=', id).executeTakeFirst()
      if (Number(result.numUpdatedRows) < count) throw expired()
      renewed = Date.parse(now)
    },
    async release() {
      await inWriteTurn(deps.db, () => deleteIntents(deps.db, id)).catch(() => {})
    },
  }
}

/**
 * Drops the intents of writers taken for dead (recorded INTENT_TTL_MS ago), as `blobs sweep` does first: serve does it
 * hourly, so that the intents of killed writers (a killed import leaves one per archive) do not pile up, and keep
 * their bytes, on a registry whose operator never sweeps. Returns how many.
 */
export function dropExpiredIntents(deps: { db: Store; now(): Date }): Promise<number> {
  const before = new Date(deps.now().getTime() - INTENT_TTL_MS).toISOString()
  return inWriteTurn(deps.db, () => deleteIntentsBefore(deps.db, before))
}
