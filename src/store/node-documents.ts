/** Rendered node documents (schema.sql: the document_* columns of nodes): read with what is put in when served, written in batches. */
import { updateRows } from './bulk'
import { dialectOf, type Store } from './db'
import { prepared, preparedList } from './prepared'
import type { NodeRow } from './schema'

/** A node's document: its own fields' JSON, its latest version's (without downloadUrl), that version's archive path. */
export interface NodeDocument {
  node_id: string
  node_json: string
  version_json: string | null
  download_path: string
}

/** A document with what changes apart from it: the node's count and publisher, and which version is its latest. */
export type ServedDocument = NodeDocument & Pick<NodeRow, 'downloads' | 'publisher_id' | 'latest_version_id'>

/** The stored document of a row read whole, if it has one of `format`. */
export function storedDocument(row: NodeRow, format: number): ServedDocument | undefined {
  if (row.document_format !== format || row.document_json === null) return undefined
  return {
    node_id: row.id,
    node_json: row.document_json,
    version_json: row.document_version_json,
    download_path: row.document_download_path,
    downloads: row.downloads,
    publisher_id: row.publisher_id,
    latest_version_id: row.latest_version_id,
  }
}

const documentsByIds = preparedList<{ format: number }, ServedDocument>(
  (db, p, ids) =>
    db
      .selectFrom('nodes')
      .select([
        'id as node_id',
        'document_json as node_json',
        'document_version_json as version_json',
        'document_download_path as download_path',
        'downloads',
        'publisher_id',
        'latest_version_id',
      ])
      .where('id', 'in', ids)
      .where('document_format', '=', p.format as unknown as number) as never,
)

/** The documents of these nodes written in `format`; nodes without one (or with one of another format) are left out. */
export function readDocuments(db: Store, format: number, ids: readonly string[]): Promise<ServedDocument[]> {
  return documentsByIds(db, { format }, ids)
}

const columns = (format: number, d: NodeDocument) => ({
  id: d.node_id,
  document_format: format,
  document_json: d.node_json,
  document_version_json: d.version_json,
  document_download_path: d.download_path,
})

/** Writes documents made from rows read in the same transaction (after lockNodes): they replace whatever is stored. */
export async function saveDocuments(db: Store, format: number, docs: readonly NodeDocument[]): Promise<void> {
  await updateRows(
    db,
    'nodes',
    'id',
    docs.map((d) => columns(format, d)),
  )
}

/** Nodes per page of the scan for missing documents, and per statement of lockNodes. */
const SCAN_PAGE = 500

/**
 * Holds these nodes' rows until the transaction ends, on PostgreSQL, so that what is read of them next is what the
 * last write to commit left (a write that changed only versions would otherwise read a node another write is
 * changing, and store a document of the old row once that write commits). SQLite runs one write at a time.
 */
export async function lockNodes(db: Store, ids: readonly string[]): Promise<void> {
  if (dialectOf(db) !== 'postgres') return
  // In id order, as every writer through here takes them.
  const sorted = [...ids].sort()
  for (let i = 0; i < sorted.length; i += SCAN_PAGE) {
    await db
      .selectFrom('nodes')
      .select('id')
      .where('id', 'in', sorted.slice(i, i + SCAN_PAGE))
      .orderBy('id')
      .forUpdate()
      .execute()
  }
}

const nodesAfter = prepared<{ after: string }, { id: string; document_format: number | null }>((db, p) =>
  db.selectFrom('nodes').select(['id', 'document_format']).where('id', '>', p.after).orderBy('id').limit(SCAN_PAGE),
)

/**
 * Of the next nodes in id order after `after`: those without a document of `format`, and where to go on from (none
 * at the end). A page at a time, filtered here: a filter in SQL would scan the whole table in one statement when
 * nothing is missing, holding the event loop.
 */
export async function nodesWithoutDocument(db: Store, format: number, after: string): Promise<{ ids: string[]; next?: string }> {
  const rows = await nodesAfter(db, { after })
  return {
    ids: rows.filter((r) => r.document_format !== format).map((r) => r.id),
    next: rows.length === SCAN_PAGE ? rows[rows.length - 1]!.id : undefined,
  }
}
