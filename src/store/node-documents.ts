/** Rendered node documents (schema.sql: node_documents): read a page at a time, written in batches. */
import { sql } from 'kysely'
import { insertRows } from './bulk'
import { dialectOf, type Store } from './db'
import { prepared, preparedList } from './prepared'
import { archiveHereOf } from './versions'
import type { NodeDocumentTable } from './schema'

/**
 * A node's document, and the publisher and latest version it was rendered with; read from the store, also whether
 * that version has an archive here (availableArchiveIds' rule, asked in the same statement: a second one for a page
 * of nodes was a fifth of its reading).
 */
export type NodeDocument = Omit<NodeDocumentTable, 'format' | 'download_path'> & { download_path: string; archived?: boolean }

/**
 * What a read of a document found out that the next read of it can skip, while nothing about its node changes: whether
 * its latest version had an archive here, and (SQLite) the document's row number, which finds the row in one walk of
 * the table instead of two (the id's index, then the table).
 */
export interface DocumentPlace {
  archived: boolean
  row?: number
}

const COLUMNS = ['node_id', 'publisher_id', 'latest_version_id', 'node_json', 'version_json', 'download_path'] as const

type DocumentRead = NodeDocument & { archived: number | boolean; row_number?: number }

const documentsByIds = preparedList<{ format: number }, DocumentRead>((db, p, ids) => {
  const query = db
    .selectFrom('node_documents')
    .select(COLUMNS)
    .select((eb) => archiveHereOf<'node_documents'>(db, 'node_documents.latest_version_id')(eb).as('archived'))
    .where('node_id', 'in', ids)
    .where('format', '=', p.format as unknown as number)
  return dialectOf(db) === 'sqlite' ? query.select(sql<number>`node_documents.rowid`.as('row_number')) : query
})

/** The same without the archive question (its answer known), by row number (SQLite) or by id. */
const documentsAtRows = preparedList<{ format: number }, NodeDocument>((db, p, rows) =>
  db
    .selectFrom('node_documents')
    .select(COLUMNS)
    .where(sql<number>`node_documents.rowid`, 'in', rows as unknown as number[])
    .where('format', '=', p.format as unknown as number),
)
const documentsByIdsAlone = preparedList<{ format: number }, NodeDocument>((db, p, ids) =>
  db
    .selectFrom('node_documents')
    .select(COLUMNS)
    .where('node_id', 'in', ids)
    .where('format', '=', p.format as unknown as number),
)

/**
 * The documents of these nodes written in `format`, each with where it was found (DocumentPlace); nodes without one
 * (or with one of another format) are left out.
 */
export async function readDocuments(
  db: Store,
  format: number,
  ids: readonly string[],
): Promise<(NodeDocument & { archived: boolean; place: DocumentPlace })[]> {
  const docs = (await documentsByIds(db, { format }, ids)) as (DocumentRead & { place: DocumentPlace })[]
  for (const d of docs) {
    d.archived = Boolean(d.archived) // SQLite answers 0 or 1
    d.place = { archived: d.archived, row: d.row_number }
  }
  return docs as (NodeDocument & { archived: boolean; place: DocumentPlace })[]
}

/**
 * The documents of nodes read before, from where they were found then, as they are now, with the archive answer of
 * then. A node whose document is not where it was (its row number another's now) is left out: read it again by id.
 */
export async function readDocumentsAt(db: Store, format: number, places: ReadonlyMap<string, DocumentPlace>): Promise<NodeDocument[]> {
  const rows = [...places.values()].flatMap((p) => (p.row === undefined ? [] : [p.row]))
  const byRow = rows.length === places.size && dialectOf(db) === 'sqlite'
  const docs = byRow ? await documentsAtRows(db, { format }, rows) : await documentsByIdsAlone(db, { format }, [...places.keys()])
  return docs.filter((d) => {
    const place = places.get(d.node_id)
    if (place) d.archived = place.archived
    return place !== undefined
  })
}

/** Writes documents made from rows read in the same transaction (after lockNodes): they replace whatever is stored. */
export async function saveDocuments(db: Store, format: number, docs: readonly NodeDocument[]): Promise<void> {
  await insertRows(
    db,
    'node_documents',
    docs.map((d) => ({
      node_id: d.node_id,
      format,
      publisher_id: d.publisher_id,
      latest_version_id: d.latest_version_id,
      node_json: d.node_json,
      version_json: d.version_json,
      download_path: d.download_path,
    })),
    `on conflict (node_id) do update set format = excluded.format, publisher_id = excluded.publisher_id,
      latest_version_id = excluded.latest_version_id, node_json = excluded.node_json,
      version_json = excluded.version_json, download_path = excluded.download_path`,
  )
}

/** Nodes per page of the scan for missing documents. */
const SCAN_PAGE = 500

/**
 * The bound is on both sides of the join: PostgreSQL merges the two key orders and, told only of the nodes' bound,
 * read the documents from the first one on every page (76 ms a page at 100,000 nodes, where this takes 1 ms).
 */
const nodesAfter = prepared<{ after: string }, { id: string; format: number | null; texts: string | null }>((db, p) =>
  db
    .selectFrom('nodes')
    .leftJoin('node_documents', (join) => join.onRef('node_documents.node_id', '=', 'nodes.id').on('node_documents.node_id', '>', p.after))
    .leftJoin('node_search_keywords', (join) =>
      join.onRef('node_search_keywords.node_id', '=', 'nodes.id').on('node_search_keywords.node_id', '>', p.after),
    )
    .select(['nodes.id', 'node_documents.format', 'node_search_keywords.node_id as texts'])
    .where('nodes.id', '>', p.after)
    .orderBy('nodes.id')
    .limit(SCAN_PAGE),
)

/**
 * Of the next nodes in id order after `after`: those without a document of `format` or without search texts (a node
 * written by an older executable on a store another instance had moved on), and where to go on from (none at the
 * end). A page at a time, filtered here: a filter in SQL would scan the whole table in one statement when nothing is
 * missing, holding the event loop.
 */
export async function nodesWithoutDocument(db: Store, format: number, after: string): Promise<{ ids: string[]; next?: string }> {
  const rows = await nodesAfter(db, { after })
  return {
    ids: rows.filter((r) => r.format !== format || r.texts === null).map((r) => r.id),
    next: rows.length === SCAN_PAGE ? rows[rows.length - 1]!.id : undefined,
  }
}
