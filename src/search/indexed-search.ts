/** The in-memory search engine: warms from the store in the background, then answers every list query. */
import type { Log } from '../log'
import { BoundedCache } from '../bounded-cache'
import type { Store } from '../store/db'
import { listPublishersByIds } from '../store/publishers'
import { countIndexableNodes, loadSearchDocBatch, loadSearchDocs, type SearchDoc } from '../store/search-docs'
import { Catalog, hash53, popularityBoost } from './catalog'
import type { Plan } from './catalog-facts'
import { KeywordIndex, textKey } from './keyword'
import { PublisherNames } from './publisher-names'
import { byScore, inOrder, type Matches } from './matches'
import type { NodeQuery } from '../domain/node-query'
import type { NodeSearch } from './node-search'
import { createStoreSearch } from './store-search'

/** Rows read from the store at once while warming (a few milliseconds of SQLite at a time). */
const BATCH = 500
/** The longest the warm-up holds the event loop before it lets waiting requests in. */
const SLICE_MS = 8
/** Bytes the query cache may hold in all (each answer's own, 2 a key character, and a little per entry). */
export const QUERY_CACHE_MAX_BYTES = 16 * 1024 * 1024
const querySize = (key: string, matches: Matches) => matches.bytes + 2 * key.length + 64

export interface IndexedSearch extends NodeSearch {
  /** Loads every node from the store; the store answers queries until this resolves. */
  warm(): Promise<void>
  /** Stops a warm-up in progress (before the store closes). */
  close(): void
  /** Bytes the query cache holds now. */
  readonly cacheBytes: number
  /** The download counts of the nodes it holds among these, once warm (none before). */
  downloadsOf(ids: readonly string[]): ReadonlyMap<string, number> | undefined
  /** The slot of a node it holds (warm or not): a number no other node is given while the process lives. */
  slotOf(id: string): number | undefined
}

export interface IndexedSearchOptions {
  queryCacheBytes?: number
  /**
   * Answers while the index warms (default: the store, on this thread); told to get ready when the warm-up will take
   * a while (`prepare`), closed once the index is ready.
   */
  fallback?: Fallback
  /** Event-loop budget of one warm-up step (tests make it 0: a yield after every node). */
  sliceMs?: number
}

export type Fallback = NodeSearch & { prepare?(): void; close?(): void }

/** Nodes from which a warm-up takes long enough (about a second) that the fallback is made ready before it is asked. */
const LONG_WARM_UP_NODES = 10_000

/** A timer, not setImmediate: more of the waiting I/O gets in at each step (store/bulk.ts's breathe() favours the work). */
const yieldToRequests = () => new Promise((resolve) => setTimeout(resolve, 0))

export function createIndexedSearch(db: Store, log: Log, opts: IndexedSearchOptions = {}): IndexedSearch {
  const maxCacheBytes = opts.queryCacheBytes ?? QUERY_CACHE_MAX_BYTES
  const sliceMs = opts.sliceMs ?? SLICE_MS
  const fallback: Fallback = opts.fallback ?? createStoreSearch(db)
  const catalog = new Catalog()
  const keyword = new KeywordIndex()
  /** A hash of each slot's searched text: the keyword index is touched only when that text changed. */
  const textHash: number[] = []
  /** The matches of recent queries, dropped whenever a write could change any of them. */
  const cache = new BoundedCache<Matches>(maxCacheBytes)
  /** Bumped whenever cached answers were dropped because a change could alter them. */
  let generation = 0
  /** Change sequence numbers, so a batch read before a change never overwrites what the change applied. */
  let sequence = 0
  const changedAt = new Map<string, number>()
  const publisherNames = new PublisherNames()
  let ready = false
  let closed = false
  /** Changes committed before the warm-up starts need no work here: the warm-up reads them from the store. */
  let started = false

  function apply(docs: SearchDoc[], readAt: number): void {
    let changed = false
    for (const doc of docs) {
      if ((changedAt.get(doc.id.toLowerCase()) ?? 0) > readAt) continue
      if (doc.status === 'deleted') {
        const slot = catalog.remove(doc.id)
        if (slot !== undefined) keyword.remove(slot)
        if (slot !== undefined) publisherNames.hold(slot, undefined)
        changed ||= slot !== undefined
        continue
      }
      const { slot, change } = catalog.upsert(doc, !ready)
      publisherNames.hold(slot, doc)
      const hash = hash53(textKey(doc))
      const textChanged = textHash[slot] !== hash
      if (textChanged) keyword.put(slot, doc, textHash[slot] !== undefined)
      textHash[slot] = hash
      changed ||= textChanged || change !== 'none'
    }
    // During a warm-up every few batches (warm()), not per slice of it.
    if (ready) keyword.compact()
    if (changed) clearCache()
    if (ready && !closed && keyword.needsCleanUp) {
      // Behind the writes, a slice at a time: searches meanwhile skip discarded documents' postings as before.
      keyword
        .cleanUp(yieldToRequests, sliceMs, () => closed)
        .catch((err: Error) => log.warn('search.cleanup_failed', { error: err.message }))
    }
  }

  function clearCache() {
    cache.clear()
    generation++
  }

  /**
   * apply(), 16 documents at a time, letting waiting requests in whenever it held the event loop `sliceMs`: a
   * warm-up batch, or the nodes of a publisher banned or renamed (20,000 applied at once held it 0.4-1.6 s).
   */
  async function applyInSlices(docs: SearchDoc[], readAt: number): Promise<void> {
    for (let from = 0; from < docs.length && !closed;) {
      const sliceStart = performance.now()
      do {
        const to = Math.min(docs.length, from + 16)
        apply(docs.slice(from, to), readAt)
        from = to
      } while (from < docs.length && performance.now() - sliceStart < sliceMs)
      if (from < docs.length) await yieldToRequests()
    }
  }

  /** Documents of many nodes, read a statement of BATCH at a time with waiting requests let in between. */
  async function loadInBatches(ids: readonly string[]): Promise<SearchDoc[]> {
    const docs: SearchDoc[] = []
    for (let i = 0; i < ids.length; i += BATCH) {
      if (i) await yieldToRequests()
      docs.push(...(await loadSearchDocs(db, ids.slice(i, i + BATCH))))
    }
    return docs
  }

  /** Applies the documents `load` gives a page at a time in id order (`after` the last one's id), until one is short. */
  async function applyPages(load: (after: string | undefined) => Promise<SearchDoc[]>, readAt: () => number): Promise<void> {
    for (let after: string | undefined; !closed;) {
      const at = readAt()
      const page = await load(after)
      await applyInSlices(page, at)
      if (page.length < BATCH) return
      after = page[page.length - 1]!.id
      await yieldToRequests()
    }
  }

  /** Nodes whose documents are being read for a refresh (and publisher refreshes under way, whose nodes are not
   * known until read): a count for one of them goes through the store too, in sequence. */
  const refreshing = new Map<string, number>()
  /** Nodes whose last refresh failed: what the index holds of them may be old, their counts included. */
  const doubtful = new Set<string>()
  let publisherReads = 0

  async function refresh(ids: readonly string[], load: () => Promise<SearchDoc[]>) {
    if (!started) return
    const readAt = ++sequence
    const keys = ids.map((id) => id.toLowerCase())
    for (const key of keys) {
      changedAt.set(key, readAt)
      refreshing.set(key, (refreshing.get(key) ?? 0) + 1)
    }
    let docs: SearchDoc[]
    try {
      docs = await load()
      await applyInSlices(docs, readAt)
      for (const key of keys) doubtful.delete(key)
    } catch (err) {
      for (const key of keys) doubtful.add(key)
      throw err
    } finally {
      for (const key of keys) {
        const n = refreshing.get(key)! - 1
        if (n) refreshing.set(key, n)
        else refreshing.delete(key)
      }
    }
    const found = new Set(docs.map((d) => d.id.toLowerCase()))
    const gone = ids.filter((id) => !found.has(id.toLowerCase()))
    apply(
      gone.map((id) => ({ id, status: 'deleted' }) as SearchDoc),
      readAt,
    )
  }

  /** Exact matches that pass the plan, in the order given. */
  function passing(plan: Plan, slots: readonly number[]): number[] {
    return slots.filter((slot) => (!plan.candidates || plan.candidates.has(slot)) && plan.keep(slot))
  }

  /** Slots passing the plan in list order, after the `first` ones (exact matches). */
  function inListOrder(plan: Plan, first: number[] = []): Int32Array {
    const lead = passing(plan, first)
    const skip = new Set(lead)
    const order = catalog.ordered()
    // Few candidates are sorted into list order; many are found by walking it.
    if (plan.candidates && plan.candidates.size * 16 < order.length) {
      const rest = passing(
        plan,
        plan.candidates.slots.filter((s) => !skip.has(s)),
      ).sort((a, b) => catalog.rank(a) - catalog.rank(b))
      return Int32Array.from([...lead, ...rest])
    }
    const out = new Int32Array(order.length + lead.length)
    out.set(lead)
    let n = plan.collect(out, lead.length)
    if (skip.size) {
      const end = n
      n = lead.length
      for (let i = n; i < end; i++) if (!skip.has(out[i]!)) out[n++] = out[i]!
    }
    return out.slice(0, n)
  }

  /** Exact id, then exact host node class name, then relevance (ties in list order). */
  function byRelevance(text: string, plan: Plan): Matches {
    const exact = [...new Set([catalog.slotOf(text), ...catalog.hostNodeOwners(text)].filter((s) => s !== undefined))]
    const hits = keyword.search(text, (slot) => popularityBoost(catalog.downloadsOf(slot)))
    if (!hits) return inOrder(inListOrder(plan, exact))
    const lead = passing(plan, exact)
    const skip = new Set(lead)
    const slots = new Int32Array(hits.ids.length)
    const scores = new Float64Array(hits.ids.length)
    const ranks = new Int32Array(hits.ids.length)
    let n = 0
    for (let i = 0; i < hits.ids.length; i++) {
      const slot = hits.ids[i]!
      if (skip.has(slot) || (plan.candidates && !plan.candidates.has(slot)) || !plan.keep(slot)) continue
      slots[n] = slot
      scores[n] = hits.scores[i]!
      // Each hit's place in list order read once, not at each comparison.
      ranks[n++] = catalog.rank(slot)
    }
    // Copied to their length only when the plan dropped many: the query cache counts each answer's bytes.
    const fit = <T extends Int32Array | Float64Array>(a: T) => (n * 2 > a.length ? a.subarray(0, n) : a.slice(0, n)) as T
    return byScore(Int32Array.from(lead), { slots: fit(slots), scores: fit(scores), ranks: fit(ranks) })
  }

  function matches(q: NodeQuery): Matches {
    const { offset: _o, limit: _l, ...key } = q
    const cacheKey = JSON.stringify(key)
    const hit = cache.get(cacheKey)
    if (hit) return hit
    const plan = catalog.plan(q)
    const text = q.search?.trim()
    const result = text ? byRelevance(text, plan) : inOrder(inListOrder(plan))
    if (cache.admits(cacheKey)) cache.set(cacheKey, result, querySize(cacheKey, result))
    return result
  }

  /** Builds the substring indexes' stale blocks, `sliceMs` at a time. */
  async function prepareSubstrings(): Promise<void> {
    while (!closed && catalog.prepareSubstrings(performance.now() + sliceMs)) await yieldToRequests()
  }

  return {
    async warm() {
      started = true
      const t0 = performance.now()
      if (fallback.prepare && (await countIndexableNodes(db)) >= LONG_WARM_UP_NODES) fallback.prepare()
      // In small steps, each holding the event loop a few milliseconds at most: requests keep being answered
      // (by the fallback, off this thread) while the index fills.
      let batches = 0
      await applyPages(
        async (after) => {
          // Every 10 batches: a compaction walks every term (a second over a whole warm-up if done per batch), and
          // the postings of 5,000 nodes held as Maps meanwhile are a few megabytes. The substring indexes' blocks
          // filled meanwhile are built too: their texts waited as strings, and were built all at once, at the end.
          if (batches && batches % 10 === 0) {
            keyword.compact(true)
            await prepareSubstrings()
          }
          batches++
          return loadSearchDocBatch(db, after, BATCH)
        },
        () => sequence,
      )
      keyword.compact(true)
      if (closed) return
      catalog.finishLoad()
      clearCache()
      ready = true
      fallback.close?.()
      // Searches are answered meanwhile (one that needs a part not built yet builds it).
      await prepareSubstrings()
      // The load leaves the garbage of every batch behind; one full collection now returns it to the system (at
      // 100,000 nodes: 45 MiB less resident while idle, for 0.16-0.24 s of the event loop once; see decisions). At
      // the heap growth serve sets (heap-growth.ts) the collector has done so already; it matters when that is set back.
      Bun.gc(true)
      log.info('search.ready', { nodes: catalog.size, ms: Math.round(performance.now() - t0) })
    },

    slotOf: (id) => catalog.slotOf(id),

    // Not for nodes being refreshed or whose refresh failed: their counts are read from the store.
    downloadsOf(ids) {
      if (!ready) return undefined
      const counts = new Map<string, number>()
      // Lower-cased (a new string for each node of a page) only when some nodes are refreshing or doubtful.
      const unsure = refreshing.size > 0 || doubtful.size > 0
      for (const id of ids) {
        if (unsure) {
          const key = id.toLowerCase()
          if (refreshing.has(key) || doubtful.has(key)) continue
        }
        const slot = catalog.slotOf(id)
        if (slot !== undefined) counts.set(id, catalog.downloadsOf(slot))
      }
      return counts
    },

    async find(q) {
      if (!ready) return fallback.find(q)
      const all = matches(q)
      const ids = Array.from(all.slice(q.offset, q.offset + q.limit), (slot) => catalog.handOut(slot))
      return { ids, total: all.total }
    },

    async hostNodeOwner(name) {
      if (!ready) return fallback.hostNodeOwner(name)
      const slot = catalog.hostNodeOwners(name)[0]
      return slot === undefined ? undefined : catalog.handOut(slot)
    },

    nodesChanged: (ids) => refresh(ids, () => loadInBatches(ids)),

    // A flush of counts sets the numbers on the nodes held, with no store read; a node not held yet (the
    // warm-up has not reached it) or being refreshed right now is read from the store instead, in sequence.
    async countsChanged(counts) {
      if (!started) return
      const viaStore: string[] = []
      const held: [string, number][] = []
      for (const [id, downloads] of counts) {
        if (publisherReads || refreshing.has(id.toLowerCase())) viaStore.push(id)
        else held.push([id, downloads])
      }
      const { change, unknown } = catalog.setDownloadsMany(held)
      viaStore.push(...unknown)
      if (change !== 'none') clearCache()
      if (viaStore.length) await refresh(viaStore, () => loadInBatches(viaStore))
    },

    // Only a rename changes what the index holds of a publisher's nodes: when every document held of it carries
    // its current name, nothing is read but its row (reading and applying all of a 20,000-node publisher's took
    // 0.5-0.7 s). Only while nothing else is being read: a read under way may have seen an older name, and its
    // documents are not held yet. Sequenced before its read, like refresh(): a change that lands meanwhile wins.
    async publishersChanged(publisherIds) {
      if (!started) return
      const readAt = ++sequence
      const rows = await listPublishersByIds(db, publisherIds)
      const settled = ready && !publisherReads && !refreshing.size
      const reread = settled ? rows.filter((p) => !publisherNames.allCarry(p.id, p.name)) : rows
      publisherReads++
      try {
        for (const publisher of reread) {
          await applyPages(
            async (after) => {
              const docs = await loadSearchDocBatch(db, after, BATCH, publisher.id)
              for (const d of docs) {
                const key = d.id.toLowerCase()
                if ((changedAt.get(key) ?? 0) < readAt) changedAt.set(key, readAt)
              }
              return docs
            },
            () => readAt,
          )
        }
      } finally {
        publisherReads--
      }
    },

    status: () => ({ ready, indexed: catalog.size, engine: ready ? 'index' : 'store' }),

    generation: () => generation,

    get cacheBytes() {
      return cache.bytes
    },

    close() {
      closed = true
      fallback.close?.()
    },
  }
}
