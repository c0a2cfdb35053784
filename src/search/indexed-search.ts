/** The in-memory search engine: warms from the store in the background, then answers every list query. */
import type { Log } from '../log'
import type { Store } from '../store/db'
import { loadSearchDocBatch, loadSearchDocs, loadSearchDocsOfPublishers, type SearchDoc } from '../store/search-docs'
import { Catalog, entryFilter, popularityBoost } from './catalog'
import { KeywordIndex, textKey } from './keyword'
import type { NodeQuery, NodeSearch } from './node-search'
import { createStoreSearch } from './store-search'

const BATCH = 2000
const CACHE_ENTRIES = 500

export interface IndexedSearch extends NodeSearch {
  /** Loads every node from the store; the store answers queries until this resolves. */
  warm(): Promise<void>
}

export function createIndexedSearch(db: Store, log: Log): IndexedSearch {
  const fallback = createStoreSearch(db)
  const catalog = new Catalog()
  const keyword = new KeywordIndex()
  const textHash: number[] = []
  /** Full ordered match lists of recent queries, dropped whenever a write could change any of them. */
  const cache = new Map<string, Int32Array>()
  /** Change sequence numbers, so a batch read before a change never overwrites what the change applied. */
  let sequence = 0
  const changedAt = new Map<string, number>()
  let ready = false

  function apply(docs: SearchDoc[], readAt: number): void {
    let changed = false
    for (const doc of docs) {
      if ((changedAt.get(doc.id.toLowerCase()) ?? 0) > readAt) continue
      if (doc.status === 'deleted') {
        const slot = catalog.remove(doc.id)
        if (slot !== undefined) keyword.remove(slot)
        changed ||= slot !== undefined
        continue
      }
      const { slot, change } = catalog.upsert(doc, !ready)
      const hash = Number(Bun.hash(textKey(doc)) & 0xffffffffn)
      const textChanged = textHash[slot] !== hash
      if (textChanged) keyword.put(slot, doc, textHash[slot] !== undefined)
      textHash[slot] = hash
      changed ||= textChanged || change !== 'none'
    }
    if (changed) cache.clear()
  }

  async function refresh(ids: readonly string[], load: () => Promise<SearchDoc[]>) {
    const readAt = ++sequence
    for (const id of ids) changedAt.set(id.toLowerCase(), readAt)
    const docs = await load()
    apply(docs, readAt)
    const found = new Set(docs.map((d) => d.id.toLowerCase()))
    const gone = ids.filter((id) => !found.has(id.toLowerCase()))
    apply(gone.map((id) => ({ id, status: 'deleted' }) as SearchDoc), readAt)
  }

  function matches(q: NodeQuery): Int32Array {
    const { offset: _o, limit: _l, ...key } = q
    const cacheKey = JSON.stringify(key)
    const hit = cache.get(cacheKey)
    if (hit) return hit
    const keep = entryFilter(q)
    const slots: number[] = []
    if (q.search?.trim()) {
      const text = q.search.trim()
      const seen = new Set<number>()
      const add = (slot: number | undefined) => {
        if (slot === undefined || seen.has(slot)) return
        seen.add(slot)
        const entry = catalog.entry(slot)
        if (entry && keep(entry)) slots.push(slot)
      }
      add(catalog.slotOf(text))
      for (const slot of catalog.hostNodeOwners(text)) add(slot)
      const hits = keyword.search(text, (slot) => popularityBoost(catalog.entry(slot)?.downloads ?? 0))
      hits.sort((a, b) => b.score - a.score || catalog.rank(a.slot) - catalog.rank(b.slot))
      for (const h of hits) add(h.slot)
    } else {
      for (const slot of catalog.ordered()) if (keep(catalog.entry(slot)!)) slots.push(slot)
    }
    const result = Int32Array.from(slots)
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
    cache.set(cacheKey, result)
    return result
  }

  return {
    async warm() {
      const started = performance.now()
      let after: string | undefined
      for (;;) {
        const readAt = sequence
        const batch = await loadSearchDocBatch(db, after, BATCH)
        if (!batch.length) break
        apply(batch, readAt)
        after = batch[batch.length - 1]!.id
        await new Promise((resolve) => setImmediate(resolve)) // let requests in between batches
      }
      catalog.finishLoad()
      cache.clear()
      ready = true
      log.info('search.ready', { nodes: catalog.size, ms: Math.round(performance.now() - started) })
    },

    async find(q) {
      if (!ready) return fallback.find(q)
      const all = matches(q)
      const ids = Array.from(all.subarray(q.offset, q.offset + q.limit), (slot) => catalog.entry(slot)!.id)
      return { ids, total: all.length }
    },

    async hostNodeOwner(name) {
      if (!ready) return fallback.hostNodeOwner(name)
      const slot = catalog.hostNodeOwners(name)[0]
      return slot === undefined ? undefined : catalog.entry(slot)!.id
    },

    nodesChanged: (ids) => refresh(ids, () => loadSearchDocs(db, ids)),

    async publishersChanged(publisherIds) {
      const docs = await loadSearchDocsOfPublishers(db, publisherIds)
      await refresh(docs.map((d) => d.id), async () => docs)
    },

    status: () => ({ ready, indexed: catalog.size, engine: ready ? 'index' : 'store' }),
  }
}
