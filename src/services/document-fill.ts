/**
 * The documents of nodes written before documents existed (an upgraded store) or by an executable of another
 * format, written in the background of a serving registry, a batch at a time in id order.
 */
import { breathe } from '../store/bulk'
import type { Store } from '../store/db'
import { nodesWithoutDocument } from '../store/node-documents'
import type { Log } from '../log'
import { DOCUMENT_FORMAT, writeDocuments } from './node-documents'
import { inWriteTurn } from './write-turn'

/** Nodes per batch: a transaction of a few milliseconds between two turns of the event loop. */
const FILL_BATCH = 100

/**
 * Writes the missing documents until `stopped()`; each batch in a transaction of its own, as a write does (its rows
 * locked, then read), so that a write landing beside it is never undone. Returns how many nodes it wrote.
 */
export async function fillMissingDocuments(db: Store, stopped: () => boolean = () => false): Promise<number> {
  let written = 0
  let after: string | undefined = ''
  while (after !== undefined && !stopped()) {
    const page: { ids: string[]; next?: string } = await nodesWithoutDocument(db, DOCUMENT_FORMAT, after)
    for (let i = 0; i < page.ids.length && !stopped(); i += FILL_BATCH) {
      const batch = page.ids.slice(i, i + FILL_BATCH)
      await inWriteTurn(db, () => db.transaction().execute((trx) => writeDocuments(trx, batch)))
      written += batch.length
      await breathe()
    }
    after = page.next
    // Also after a page with nothing to write: a store with every document was scanned whole in one turn of the
    // event loop (100,000 nodes: 0.25-0.4 s, right after the index was ready).
    await breathe()
  }
  return written
}

/** The fill in the background, logged when it wrote anything; stop() waits for its batch. */
export function fillDocumentsInBackground(db: Store, log: Log): { stop(): Promise<void> } {
  let stopping = false
  const t0 = performance.now()
  const done = fillMissingDocuments(db, () => stopping).then(
    (written) => {
      if (written) log.info('documents.filled', { nodes: written, ms: Math.round(performance.now() - t0) })
    },
    (err: Error) => log.warn('documents.fill_failed', { error: err.message }),
  )
  return {
    async stop() {
      stopping = true
      await done
    },
  }
}
