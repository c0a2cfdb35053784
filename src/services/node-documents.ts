/**
 * Node documents, the one way a node is rendered: each node's JSON made from its rows when the node is written
 * and kept in node_documents, so that a page of nodes reads one row per node and renders nothing. What changes apart
 * from the node is put in when the text is made: its download count, its publisher and its latest version's
 * download URL (this server's public URL, and only while the archive can be downloaded here).
 */
import type { NodeJson, PublisherJson } from '../domain/wire'
import { archivePath } from '../domain/urls'
import { breathe } from '../store/bulk'
import type { Store } from '../store/db'
import { readDocuments, saveDocuments, type NodeDocument } from '../store/node-documents'
import { lockNodes } from '../store/row-locks'
import { listNodesByIds } from '../store/nodes'
import { writeSearchTexts } from '../store/search-texts'
import type { NodeRow, VersionRow } from '../store/schema'
import { availableArchiveIds, listVersionsByIds } from '../store/versions'
import { nodeJson, renderNodePublishers, versionJson } from './views'

/**
 * The rendering's format: raise it when what a document holds changes (test/unit/node-documents.test.ts pins the
 * two together), and every stored document is read as missing and written again.
 */
export const DOCUMENT_FORMAT = 1

function documentOf(node: NodeRow, latest: VersionRow | undefined): NodeDocument {
  const { downloads: _, ...fields } = nodeJson(node)
  let version_json: string | null = null
  if (latest) {
    const { downloadUrl: _url, ...version } = versionJson(latest, node, { publicUrl: '', hasArchive: false, includeReason: false })
    version_json = JSON.stringify(version)
  }
  return {
    node_id: node.id,
    publisher_id: node.publisher_id,
    latest_version_id: node.latest_version_id,
    node_json: JSON.stringify(fields),
    version_json,
    download_path: latest ? archivePath(node.publisher_id, node.id, latest.version) : '',
  }
}

/** The documents of these rows made from them as they are now (their latest versions read in one query). */
export async function makeDocuments(db: Store, rows: readonly NodeRow[]): Promise<NodeDocument[]> {
  const versions = await listVersionsByIds(
    db,
    rows.flatMap((n) => (n.latest_version_id ? [n.latest_version_id] : [])),
  )
  const byId = new Map(versions.map((v) => [v.id, v]))
  return rows.map((n) => documentOf(n, n.latest_version_id ? byId.get(n.latest_version_id) : undefined))
}

/** The documents of these rows: as stored when of this format, else made from them. */
export async function documentsOf(db: Store, rows: readonly NodeRow[]): Promise<NodeDocument[]> {
  const stored = new Map(
    (
      await readDocuments(
        db,
        DOCUMENT_FORMAT,
        rows.map((r) => r.id),
      )
    ).map((d) => [d.node_id, d]),
  )
  const unstored = rows.filter((row) => !stored.has(row.id))
  const made = new Map((unstored.length ? await makeDocuments(db, unstored) : []).map((d) => [d.node_id, d]))
  return rows.map((row) => stored.get(row.id) ?? made.get(row.id)!)
}

/** Nodes whose documents are made in one step: a publisher's ban makes tens of thousands (a second of work). */
const DOCUMENTS_PER_STEP = 500

/**
 * In a write's transaction: the documents of these nodes and their search texts (store/search-texts.ts), from
 * their rows as the write leaves them. Made a step at a time, breathing between steps; in id order throughout, each
 * step's rows locked in that order (lockNodes), so that two writers on PostgreSQL lock the nodes they share in one
 * order.
 */
export async function writeDocuments(db: Store, ids: readonly string[]): Promise<void> {
  const sorted = [...ids].sort()
  for (let i = 0; i < sorted.length; i += DOCUMENTS_PER_STEP) {
    if (i) await breathe()
    const step = sorted.slice(i, i + DOCUMENTS_PER_STEP)
    await lockNodes(db, step)
    await saveDocuments(db, DOCUMENT_FORMAT, await makeDocuments(db, await listNodesByIds(db, step)))
    await writeSearchTexts(db, step)
  }
}

/** The text of a rendered publisher as nodes show it. */
const publisherText = (p: PublisherJson) => JSON.stringify(p)

/** Publishers' texts by id; a cache may stand in for the store. */
export type PublisherTexts = (ids: readonly string[]) => Promise<Map<string, string>>

/** Publishers' texts as nodes show them, read from the store. */
export const publishersFromStore =
  (db: Store): PublisherTexts =>
  async (ids) =>
    new Map((await renderNodePublishers(db, ids)).map((p) => [p.id, publisherText(p)]))

/** A node's JSON after `{"downloads":N`, for each document: with its publisher and its latest version's download URL. */
export async function documentTails(
  db: Store,
  docs: readonly NodeDocument[],
  opts: { publicUrl: string; publishers?: PublisherTexts },
): Promise<Map<string, string>> {
  const [publishers, archived] = await Promise.all([
    (opts.publishers ?? publishersFromStore(db))([...new Set(docs.map((d) => d.publisher_id))]),
    // Documents read from the store say already; those made from rows are asked about.
    availableArchiveIds(
      db,
      docs.flatMap((d) => (d.latest_version_id && d.archived === undefined ? [d.latest_version_id] : [])),
    ),
  ])
  const tails = new Map<string, string>()
  for (const d of docs) {
    let tail = `,${d.node_json.slice(1, -1)}`
    const publisher = publishers.get(d.publisher_id)
    if (publisher !== undefined) tail += `,"publisher":${publisher}`
    if (d.version_json !== null) {
      const url = d.latest_version_id && (d.archived ?? archived.has(d.latest_version_id)) ? opts.publicUrl + d.download_path : ''
      tail += `,"latest_version":${d.version_json.slice(0, -1)},"downloadUrl":${JSON.stringify(url)}}`
    }
    tails.set(d.node_id, `${tail}}`)
  }
  return tails
}

/** The whole text of a node, from its count and its tail. */
export const nodeText = (downloads: number, tail: string) => `{"downloads":${downloads}${tail}`

/** Nodes with `publisher` (members without emails) and `latest_version`, as objects, in the order given. */
export async function renderNodes(db: Store, rows: readonly NodeRow[], opts: { publicUrl: string }): Promise<NodeJson[]> {
  const tails = await documentTails(db, await documentsOf(db, rows), opts)
  return rows.map((row) => JSON.parse(nodeText(row.downloads, tails.get(row.id)!)) as NodeJson)
}
