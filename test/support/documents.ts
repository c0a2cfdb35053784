/**
 * Whether every stored node document is what the node's rows give now: a write that changed what a node shows
 * without saying so (commitWrite's w.node or w.version) leaves one behind. Every test app checks at its cleanup.
 */
import { DOCUMENT_FORMAT, makeDocuments } from '../../src/services/node-documents'
import type { Store } from '../../src/store/db'
import { readDocuments } from '../../src/store/node-documents'
import { listNodesByIds } from '../../src/store/nodes'

/** The ids of nodes whose stored document differs from one made from their rows now (none in a store the test destroyed). */
export async function staleDocuments(db: Store): Promise<string[]> {
  let stored
  try {
    stored = await readDocuments(
      db,
      DOCUMENT_FORMAT,
      (await db.selectFrom('nodes').select('id').execute()).map((r) => r.id),
    )
  } catch (err) {
    if ((err as Error).message === 'driver has already been destroyed') return [] // Kysely's words for it
    throw err
  }
  if (!stored.length) return []
  const fresh = new Map(
    (
      await makeDocuments(
        db,
        await listNodesByIds(
          db,
          stored.map((d) => d.node_id),
        ),
      )
    ).map((d) => [d.node_id, d]),
  )
  return stored
    .filter((d) => {
      const now = fresh.get(d.node_id)
      return (
        !now ||
        now.publisher_id !== d.publisher_id ||
        now.latest_version_id !== d.latest_version_id ||
        now.node_json !== d.node_json ||
        now.version_json !== d.version_json ||
        now.download_path !== d.download_path
      )
    })
    .map((d) => d.node_id)
}
