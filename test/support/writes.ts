/** Writes meeting other writes: one that reads before it writes, and the store's write turn held. */
import { commitWrite, type WriteDeps } from '../../src/services/changes'
import type { Deps } from '../../src/services/deps'
import { createDownloadCounter } from '../../src/services/downloads'
import { sameThreadWriter } from '../../src/store/download-writer'

/**
 * Appends '+' to the node's description in one commitWrite: it reads the description, waits `pauseMs` (another
 * connection may commit meanwhile), then writes. Resolves to why it failed, or undefined.
 */
export function appendPlus(deps: WriteDeps, nodeId: string, pauseMs: number): Promise<string | undefined> {
  return commitWrite(deps, async (w) => {
    const row = await w.db.selectFrom('nodes').select('description').where('id', '=', nodeId).executeTakeFirstOrThrow()
    await Bun.sleep(pauseMs)
    await w.db
      .updateTable('nodes')
      .set({ description: `${row.description}+` })
      .where('id', '=', nodeId)
      .execute()
    w.node(nodeId)
  }).then(
    () => undefined,
    (err: unknown) => String(err),
  )
}

/**
 * Takes the store's write turn with a batch of download counts whose writer answers only when `release()` is called
 * (the batch is then written): what waits its turn meanwhile has not run. Resolves once the batch is in hand.
 */
export async function holdWriteTurn(deps: Deps): Promise<{ release(): Promise<void> }> {
  const { promise: released, resolve: release } = Promise.withResolvers<void>()
  const { promise: taken, resolve: inHand } = Promise.withResolvers<void>()
  const writer = sameThreadWriter(deps.db)
  const counter = createDownloadCounter(deps, {
    async write(counts, now) {
      inHand()
      await released
      return writer.write(counts, now)
    },
    stop: writer.stop,
  })
  counter.count('any')
  const flushed = counter.flush()
  await taken
  return {
    release() {
      release()
      return flushed
    },
  }
}

/** Lets what waits on promises alone run to its end (bun:sqlite answers without a turn of the event loop). */
export const settled = () => new Promise((resolve) => setImmediate(resolve))
