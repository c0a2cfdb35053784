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
import { commitWrite, type Write, type WriteDeps } from './changes'
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

/** The intent `underBlobIntent` holds for its work: what a writer does with it. */
export interface HeldIntent {
  /**
   * The write of the rows that name the bytes: a commitWrite that settles the intent first, in its own transaction
   * (a 503 when the intent expired meanwhile). Once: the intent is gone when it commits.
   */
  write<T>(work: (w: Write) => Promise<T>): Promise<T>
  /** In each batch's transaction of a long write that ends without `write` (an import): as BlobIntent.renew. */
  renew: BlobIntent['renew']
}

/**
 * Runs `work` under an intent for `sha256s`, recorded first: for a writer that stores bytes (or finds them stored)
 * and writes the rows that name them. The intent goes in the transaction of `write`; when `work` throws, or ends
 * without a write that committed (the bytes found swept meanwhile, an import), it is released. Staged bytes stay the
 * writer's to discard, around this call: recording the intent may fail (the database gone) before `work` runs.
 */
export async function underBlobIntent<T>(
  deps: WriteDeps,
  sha256s: readonly string[],
  work: (intent: HeldIntent) => Promise<T>,
): Promise<T> {
  const intent = await intendBlobs(deps, sha256s)
  let settled = false
  const held: HeldIntent = {
    async write(rows) {
      const value = await commitWrite(deps, async (w) => {
        await intent.settle(w.db)
        return rows(w)
      })
      settled = true // committed, and the intent with it: releasing would cost a write turn for nothing
      return value
    },
    renew: (trx, now) => intent.renew(trx, now),
  }
  try {
    return await work(held)
  } finally {
    if (!settled) await intent.release()
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
