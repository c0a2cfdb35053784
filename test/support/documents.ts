/**
 * Whether every stored node document and search text is what the node's rows give now: a write that changed what a
 * node shows without saying so (commitWrite's w.node or w.version) leaves one behind. Every test app checks at its
 * cleanup.
 */
import { DOCUMENT_FORMAT, makeDocuments } from '../../src/services/node-documents'
import type { Store } from '../../src/store/db'
import { readDocuments } from '../../src/store/node-documents'
import { listNodesByIds } from '../../src/store/nodes'
import { hostNamesOfNode, keywordsOfNode } from '../../src/store/search-texts'

/** The nodes whose document or search texts are out of date, each with which (none in a store the test destroyed). */
export async function staleNodeData(db: Store): Promise<string[]> {
  try {
    const documents = await staleDocuments(db)
    const texts = await staleSearchTexts(db)
    return [...documents.map((id) => `${id} (document)`), ...texts.map((id) => `${id} (search texts)`)]
  } catch (err) {
    if ((err as Error).message === 'driver has already been destroyed') return [] // Kysely's words for it
    throw err
  }
}

/** The ids of nodes whose stored document differs from one made from their rows now. */
async function staleDocuments(db: Store): Promise<string[]> {
  const stored = await readDocuments(
    db,
    DOCUMENT_FORMAT,
    (await db.selectFrom('nodes').select('id').execute()).map((r) => r.id),
  )
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

/** The ids of nodes without search texts, or with texts that differ from what their rows give now. */
export async function staleSearchTexts(db: Store): Promise<string[]> {
  const rows = await db
    .selectFrom('nodes')
    .leftJoin('node_search_keywords', 'node_search_keywords.node_id', 'nodes.id')
    .leftJoin('node_search_host_names', 'node_search_host_names.node_id', 'nodes.id')
    .select([
      'nodes.id',
      'node_search_keywords.text as storedKeywords',
      keywordsOfNode().as('keywords'),
      'node_search_host_names.names as storedHostNames',
      hostNamesOfNode(db).as('hostNames'),
    ])
    .execute()
  // The migration's fill joined the host names in no order.
  const names = (text: string | null) => (text === null ? null : text.split('\n').sort().join('\n'))
  return rows.filter((r) => r.storedKeywords !== r.keywords || names(r.storedHostNames) !== names(r.hostNames)).map((r) => r.id)
}
