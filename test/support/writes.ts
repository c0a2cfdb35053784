/** A write that reads before it writes, for tests of writes meeting another connection's commits. */
import { commitWrite, type WriteDeps } from '../../src/services/changes'

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
