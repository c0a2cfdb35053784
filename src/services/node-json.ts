/**
 * Rendered node JSON (with publisher and latest_version), made from each node's stored document
 * (node-documents.ts), cached per node, bounded by bytes, and dropped only for the nodes a change touched. The
 * download count is kept beside the cached text and written in when the text is served, so that a counter flush
 * updates the number without rendering anything again.
 */
import type { CacheCounter } from '../metrics'
import { TextCache } from '../text-cache'
import type { Store } from '../store/db'
import { readDocuments, readDocumentsAt, type NodeDocument } from '../store/node-documents'
import { listNodesByIds, readDownloads } from '../store/nodes'
import type { NodeRow } from '../store/schema'
import { ChangeTimes } from './change-times'
import { DocumentPlaces, type SlotOf } from './document-places'
import { DOCUMENT_FORMAT, documentTails, makeDocuments, nodeText, publishersFromStore, type PublisherTexts } from './node-documents'

/**
 * Nodes whose last change is remembered one by one (change-times.ts; some 65 bytes each): past it, the older half are
 * forgotten, and answers kept from before the newest of those count as stale. A second's count flush at 100,000 nodes
 * under installs alone names some 4,500.
 */
export const CHANGES_HELD = 16_384

/** Bytes of rendered JSON kept at most (as UTF-8), in one buffer (text-cache.ts). */
export const NODE_JSON_MAX_BYTES = 16 * 1024 * 1024

interface Entry {
  /** The JSON after `{"downloads":N`, starting with its comma. */
  tail: string
  downloads: number
}

export interface NodeJsonCache {
  /** Counts changes to any node's JSON (counter flushes included); pass it to changedAfter(). */
  readonly sequence: number
  /** Whether the JSON of any of these nodes changed after `sequence` was read. */
  changedAfter(ids: readonly string[], sequence: number): boolean
  /** The same, not counting download counts: whether anything else about the node (or its versions) changed. */
  contentChangedAfter(id: string, sequence: number): boolean
  /**
   * The JSON text of each node, in the order given; unknown ids are left out. `known`: rows the caller read already,
   * and the sequence it read before reading them (so that a change landing meanwhile keeps them from being kept).
   */
  render(ids: readonly string[], known?: { rows: readonly NodeRow[]; sequence: number }): Promise<string[]>
  nodesChanged(ids: readonly string[]): void
  /** A version of these nodes changed that their JSON does not show (not the latest): their JSON is kept. */
  versionsChanged(ids: readonly string[]): void
  /** Only these nodes' download counts changed, to the values given: cached text is kept, its count replaced. */
  countsChanged(counts: ReadonlyMap<string, number>): void
  /** Publisher names and members show inside every node of theirs. */
  publishersChanged(): void
  /** Bytes held now (for tests and metrics). */
  readonly bytes: number
}

const uncounted: CacheCounter = { hit: () => {}, miss: () => {} }

const text = (e: Entry) => nodeText(e.downloads, e.tail)

/** The ids `get` has a value for, with it, and the others, in the order given. */
function heldAndMissing<T>(ids: readonly string[], get: (id: string) => T | undefined) {
  const held = new Map<string, T>()
  const missing: string[] = []
  for (const id of ids) {
    const value = get(id)
    if (value !== undefined) held.set(id, value)
    else missing.push(id)
  }
  return { held, missing }
}

/** What the search index lends the cache: what it holds of every node. */
export interface IndexedNodes {
  /** Download counts, each as fresh as the store's (once warm); the ids it does not give are read from the store. */
  downloadsOf(ids: readonly string[]): ReadonlyMap<string, number> | undefined
  /** Each node's slot, which the documents' places are kept by (document-places.ts). */
  slotOf: SlotOf
}

export function createNodeJsonCache(
  db: Store,
  publicUrl: string,
  counter: CacheCounter = uncounted,
  maxBytes = NODE_JSON_MAX_BYTES,
  indexed?: IndexedNodes,
): NodeJsonCache {
  /**
   * Each node's tail, with its download count as the tag. Oldest out first when the bytes run out; once nearly full,
   * only nodes asked for lately come in.
   */
  const cache = new TextCache(maxBytes)
  const cached = (id: string): Entry | undefined => {
    const tail = cache.get(id)
    return tail === undefined ? undefined : { tail, downloads: cache.tag(id)! }
  }
  let sequence = 0
  /** The sequence of each node's last change, and of its last change other than its count. */
  const changed = new ChangeTimes(CHANGES_HELD)
  const contentChanged = new ChangeTimes(CHANGES_HELD)
  /** The sequence of the last change to any publisher (every node shows its publisher). */
  let publishersChangedAt = 0

  /**
   * Where each node's document was read, and its archive answer then (DocumentPlace), until the node changes: read
   * again from there, a document costs half as much (at 100,000 nodes most are read from the store, a page at a time).
   * Whatever changes the archive answer of a node's latest version changes what the node shows, so it is told as a
   * change of the node (nodesChanged), here as to the cache of texts, in this process as in the others.
   */
  const places = new DocumentPlaces(indexed?.slotOf)

  /** The stored documents of these nodes (of this format): from where they were read before, else by id. */
  async function storedDocuments(ids: readonly string[], started: number): Promise<NodeDocument[]> {
    const { held: known, missing: unknown } = heldAndMissing(ids, (id) => places.get(id))
    const docs = known.size ? await readDocumentsAt(db, DOCUMENT_FORMAT, known) : []
    if (docs.length < known.size) {
      const found = new Set(docs.map((d) => d.node_id))
      for (const id of known.keys()) if (!found.has(id)) (places.delete(id), unknown.push(id))
    }
    if (!unknown.length) return docs
    for (const d of await readDocuments(db, DOCUMENT_FORMAT, unknown)) {
      // Read before a change to the node landed: answered once, not kept (as the texts are not).
      if (!contentChanged.after(d.node_id, started)) places.set(d.node_id, d.place)
      docs.push(d)
    }
    return docs
  }

  /**
   * Rendered publishers (as every node shows them, as text): kept until any publisher changes, within half as many
   * bytes again as the nodes. They were two of the five queries of rendering a page of nodes, and publishers are
   * many: some 0.7 a node in the real registry (28,000 for the benchmark's 100,000 nodes, about 320 bytes each).
   */
  const publishers = new TextCache(maxBytes / 2)
  const fromStore = publishersFromStore(db)
  const publisherTexts: PublisherTexts = async (ids) => {
    // The texts held now: keeping the fresh ones below may evict them before they are handed out.
    const texts = new Map<string, string>()
    const missing: string[] = []
    for (const id of ids) {
      const text = publishers.get(id)
      if (text === undefined) missing.push(id)
      else texts.set(id, text)
    }
    const started = sequence
    const fresh = missing.length ? await fromStore(missing) : new Map<string, string>()
    for (const [id, text] of fresh) {
      texts.set(id, text)
      if (publishersChangedAt <= started && publishers.admits(id)) publishers.set(id, text)
    }
    return texts
  }

  /**
   * Each node's document (as stored, else made from its row: nodes written before documents existed, or by an
   * executable of another format) and its download count: from its row when read, else from the index, else the store.
   */
  async function documentsFor(
    ids: readonly string[],
    known: readonly NodeRow[] | undefined,
    started: number,
  ): Promise<{ docs: NodeDocument[]; downloads: Map<string, number> }> {
    const wanted = new Set(ids)
    const given = known?.filter((row) => wanted.has(row.id)) ?? []
    const read = new Set(given.map((row) => row.id))
    const stored = await storedDocuments(ids, started)
    const have = new Set(stored.map((d) => d.node_id))
    const rows = await listNodesByIds(
      db,
      ids.filter((id) => !have.has(id) && !read.has(id)),
    )
    const docs = [...stored, ...(await makeDocuments(db, [...given.filter((row) => !have.has(row.id)), ...rows]))]
    const downloads = new Map([...given, ...rows].map((row) => [row.id, row.downloads]))
    // The rows given carry their counts.
    const storedUnread = stored.filter((d) => !read.has(d.node_id))
    const held = indexed?.downloadsOf(storedUnread.map((d) => d.node_id))
    const uncounted = storedUnread.flatMap((d) => {
      const n = held?.get(d.node_id)
      if (n === undefined) return [d.node_id]
      downloads.set(d.node_id, n)
      return []
    })
    if (uncounted.length) for (const [id, n] of await readDownloads(db, uncounted)) downloads.set(id, n)
    return { docs, downloads }
  }

  return {
    get sequence() {
      return sequence
    },
    get bytes() {
      return cache.bytes
    },
    changedAfter: (ids, since) => changed.allAfter(since) || ids.some((id) => changed.after(id, since)),
    contentChangedAfter: (id, since) => contentChanged.after(id, since),

    async render(ids, known) {
      // The entries held now: keeping the missing ones below may evict them before the page is put together.
      const { held, missing } = heldAndMissing(ids, cached)
      counter.hit(ids.length - missing.length)
      counter.miss(missing.length)
      if (!missing.length) return ids.map((id) => text(held.get(id)!))
      const started = known ? Math.min(known.sequence, sequence) : sequence
      const { docs, downloads } = await documentsFor(missing, known?.rows, started)
      const tails = await documentTails(db, docs, { publicUrl, publishers: publisherTexts })
      const fresh = new Map<string, Entry>()
      for (const d of docs) fresh.set(d.node_id, { downloads: downloads.get(d.node_id) ?? 0, tail: tails.get(d.node_id)! })
      // Rows read before a change to them landed are answered once but not kept as current.
      for (const [id, e] of fresh) if (!changed.after(id, started) && cache.admits(id)) cache.set(id, e.tail, e.downloads)
      return ids.flatMap((id) => {
        const e = fresh.get(id) ?? held.get(id)
        return e ? [text(e)] : []
      })
    },

    nodesChanged(ids) {
      sequence++
      for (const id of ids) {
        changed.set(id, sequence)
        contentChanged.set(id, sequence)
        cache.delete(id)
        places.delete(id)
      }
    },

    versionsChanged(ids) {
      sequence++
      for (const id of ids) contentChanged.set(id, sequence)
    },

    countsChanged(counts) {
      sequence++
      for (const [id, downloads] of counts) {
        changed.set(id, sequence)
        cache.retag(id, downloads)
      }
    },

    publishersChanged() {
      publishersChangedAt = ++sequence
      changed.forgetAll(sequence)
      contentChanged.forgetAll(sequence)
      cache.clear()
      places.clear()
      publishers.clear()
    },
  }
}
