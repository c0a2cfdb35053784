/**
 * Node documents: each node's JSON rendered when the node is written and kept beside its row, so that a page of
 * nodes reads one short row per node instead of the node's wide row and its latest version's, and renders nothing.
 * What changes apart from the node is put in when the text is made: its download count, its publisher and its
 * latest version's download URL (this server's public URL, and only while the archive can be downloaded here).
 */
import type { PublisherJson } from '../domain/wire'
import { breathe } from '../store/bulk'
import type { Store } from '../store/db'
import { nodesWithoutDocument, saveDocuments, type NodeDocument, type ServedDocument } from '../store/node-documents'
import { listNodesByIds } from '../store/nodes'
import type { NodeRow, VersionRow } from '../store/schema'
import { listVersionsByIds } from '../store/versions'
import { archivePath } from '../domain/urls'
import type { Log } from '../log'
import { nodeJson, versionJson } from './views'

/** The rendering's format: raise it when what a document holds changes, and every document is written again. */
export const DOCUMENT_FORMAT = 1

function documentOf(node: NodeRow, latest: VersionRow | undefined): ServedDocument {
  const { downloads, ...fields } = nodeJson(node)
  let version_json: string | null = null
  if (latest) {
    const { downloadUrl: _, ...version } = versionJson(latest, node, { publicUrl: '', hasArchive: false, includeReason: false })
    version_json = JSON.stringify(version)
  }
  return {
    node_id: node.id,
    node_json: JSON.stringify(fields),
    version_json,
    download_path: latest ? archivePath(node.publisher_id, node.id, latest.version) : '',
    downloads,
    publisher_id: node.publisher_id,
    latest_version_id: node.latest_version_id,
  }
}

/** The documents of these rows as they are now (their latest versions read in one query). */
export async function documentsOf(db: Store, rows: readonly NodeRow[]): Promise<ServedDocument[]> {
  const versions = await listVersionsByIds(
    db,
    rows.flatMap((n) => (n.latest_version_id ? [n.latest_version_id] : [])),
  )
  const byId = new Map(versions.map((v) => [v.id, v]))
  return rows.map((n) => documentOf(n, n.latest_version_id ? byId.get(n.latest_version_id) : undefined))
}

/** The node's JSON after `{"downloads":N`: the document with its publisher and its latest version's download URL. */
export function documentTail(doc: NodeDocument, publisher: string | undefined, downloadUrl: string): string {
  let tail = `,${doc.node_json.slice(1, -1)}`
  if (publisher !== undefined) tail += `,"publisher":${publisher}`
  if (doc.version_json !== null) tail += `,"latest_version":${doc.version_json.slice(0, -1)},"downloadUrl":${JSON.stringify(downloadUrl)}}`
  return `${tail}}`
}

/** The text of a rendered publisher as nodes show it. */
export const publisherText = (p: PublisherJson) => JSON.stringify(p)

/** In a write's transaction: the documents of the nodes it changed, from the rows as the write left them. */
export async function writeDocuments(db: Store, ids: readonly string[]): Promise<void> {
  if (!ids.length) return
  await saveDocuments(db, DOCUMENT_FORMAT, await documentsOf(db, await listNodesByIds(db, ids)))
}

/** Nodes per batch of the fill: a few milliseconds of work between two turns of the event loop. */
const FILL_BATCH = 100

/**
 * Writes the documents missing (nodes written before documents existed, or by an executable of another format),
 * in id order, a batch at a time, until `stopped()`. Safe beside writes and other instances filling: a document a
 * write stored meanwhile is kept (store/node-documents.ts). Returns how many it wrote.
 */
export async function fillMissingDocuments(db: Store, stopped: () => boolean = () => false): Promise<number> {
  let written = 0
  let after: string | undefined = ''
  while (after !== undefined && !stopped()) {
    const page: { ids: string[]; next?: string } = await nodesWithoutDocument(db, DOCUMENT_FORMAT, after)
    for (let i = 0; i < page.ids.length && !stopped(); i += FILL_BATCH) {
      const rows = await listNodesByIds(db, page.ids.slice(i, i + FILL_BATCH))
      await saveDocuments(db, DOCUMENT_FORMAT, await documentsOf(db, rows), { onlyWhereMissing: true })
      written += rows.length
      await breathe()
    }
    after = page.next
  }
  return written
}

/** The fill in the background of a serving registry, logged when it wrote anything; stop() waits for its batch. */
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
