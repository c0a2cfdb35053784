/** The index's per-node facts (filter values, ordering keys) and the precomputed order every list walks. */
import { normalizePlatformValue, OS_INDEPENDENT, repositoryKey } from '../domain/platform'
import type { SearchDoc } from '../store/search-docs'
import type { NodeQuery } from './node-search'

export interface Entry {
  slot: number
  id: string
  banned: boolean
  ranking: number
  downloads: number
  updatedAt: string
  repositoryKey: string
  osKeys: string
  acceleratorKeys: string
  hostNodes: string[]
  /** Lower-cased host node names joined by newlines, for substring search. */
  hostText: string
}

/**
 * Popularity's share of relevance: 1 + 0.5 per half decade of downloads (0 -> 1, 10 -> 2, 1,000 -> 4).
 * Bucketed, so that a single download seldom changes any score.
 */
export function popularityBoost(downloads: number): number {
  return 1 + 0.5 * Math.floor(2 * Math.log10(1 + Math.max(0, downloads)))
}

/** The order of lists without a keyword: search_ranking desc, downloads desc, id asc. */
export function compareEntries(a: Entry, b: Entry): number {
  return b.ranking - a.ranking || b.downloads - a.downloads || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

export type Change = 'none' | 'order' | 'content'

export class Catalog {
  private readonly entries: (Entry | undefined)[] = []
  private readonly slotById = new Map<string, number>()
  private readonly slotsByHostNode = new Map<string, Set<number>>()
  /** Slots in list order, and each slot's position in it. */
  private order: number[] = []
  private position: number[] = []
  private sorted = true
  size = 0

  entry(slot: number): Entry | undefined {
    return this.entries[slot]
  }

  slotOf(id: string): number | undefined {
    return this.slotById.get(id.toLowerCase())
  }

  /** Position of a slot in the list order (lower comes first). */
  rank(slot: number): number {
    return this.position[slot] ?? Number.MAX_SAFE_INTEGER
  }

  /** Adds or replaces a node; during a bulk load (`deferOrder`) the order is built once by finishLoad(). */
  upsert(doc: SearchDoc, deferOrder = false): { slot: number; change: Change } {
    const existing = this.slotOf(doc.id)
    const slot = existing ?? this.entries.length
    const before = existing === undefined ? undefined : this.entries[existing]
    const hostNodes = [...new Set(doc.hostNodes)]
    const entry: Entry = {
      slot,
      id: doc.id,
      banned: doc.status === 'banned',
      ranking: doc.searchRanking,
      downloads: doc.downloads,
      updatedAt: doc.updatedAt,
      repositoryKey: doc.repositoryKey,
      osKeys: doc.osKeys,
      acceleratorKeys: doc.acceleratorKeys,
      hostNodes,
      hostText: hostNodes.join('\n').toLowerCase(),
    }
    if (before) this.unlinkHostNodes(before)
    this.entries[slot] = entry
    this.slotById.set(doc.id.toLowerCase(), slot)
    for (const name of hostNodes) this.linkHostNode(name, slot)
    if (!before) {
      this.size++
      if (deferOrder) {
        this.order.push(slot)
        this.sorted = false
      } else this.place(slot)
      return { slot, change: 'content' }
    }
    const moved = !deferOrder && compareEntries(before, entry) !== 0 && this.reposition(slot)
    const sameFacts =
      before.banned === entry.banned && before.updatedAt === entry.updatedAt && before.repositoryKey === entry.repositoryKey &&
      before.osKeys === entry.osKeys && before.acceleratorKeys === entry.acceleratorKeys && before.hostText === entry.hostText &&
      popularityBoost(before.downloads) === popularityBoost(entry.downloads)
    return { slot, change: !sameFacts ? 'content' : moved ? 'order' : 'none' }
  }

  remove(id: string): number | undefined {
    const slot = this.slotOf(id)
    const entry = slot === undefined ? undefined : this.entries[slot]
    if (slot === undefined || !entry) return undefined
    this.unlinkHostNodes(entry)
    this.slotById.delete(id.toLowerCase())
    this.entries[slot] = undefined
    // Positions are only kept once the order is sorted (not during a bulk load).
    const at = this.sorted ? this.position[slot]! : this.order.indexOf(slot)
    this.order.splice(at, 1)
    if (this.sorted) this.renumber(at, this.order.length - 1)
    this.size--
    return slot
  }

  /** Sorts the order once after a bulk load. */
  finishLoad(): void {
    if (this.sorted) return
    this.order.sort((a, b) => compareEntries(this.entries[a]!, this.entries[b]!))
    this.renumber(0, this.order.length - 1)
    this.sorted = true
  }

  /** Slots in list order. */
  ordered(): readonly number[] {
    return this.order
  }

  /** Slots of nodes providing a host node named exactly `name` (ignoring case), in list order. */
  hostNodeOwners(name: string): number[] {
    return [...(this.slotsByHostNode.get(name.toLowerCase()) ?? [])].sort((a, b) => this.rank(a) - this.rank(b))
  }

  private linkHostNode(name: string, slot: number) {
    const key = name.toLowerCase()
    const set = this.slotsByHostNode.get(key) ?? new Set<number>()
    set.add(slot)
    this.slotsByHostNode.set(key, set)
  }

  private unlinkHostNodes(entry: Entry) {
    for (const name of entry.hostNodes) {
      const set = this.slotsByHostNode.get(name.toLowerCase())
      set?.delete(entry.slot)
      if (set?.size === 0) this.slotsByHostNode.delete(name.toLowerCase())
    }
  }

  /** Binary search for where an entry belongs in the order. */
  private insertionPoint(entry: Entry): number {
    let lo = 0
    let hi = this.order.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareEntries(this.entries[this.order[mid]!]!, entry) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  private place(slot: number) {
    const at = this.insertionPoint(this.entries[slot]!)
    this.order.splice(at, 0, slot)
    this.renumber(at, this.order.length - 1)
  }

  /** Moves a slot whose keys changed; true when its place among the others changed. */
  private reposition(slot: number): boolean {
    const from = this.position[slot]!
    this.order.splice(from, 1)
    const to = this.insertionPoint(this.entries[slot]!)
    this.order.splice(to, 0, slot)
    if (to === from) return false
    this.renumber(Math.min(from, to), Math.max(from, to))
    return true
  }

  private renumber(from: number, to: number) {
    for (let i = from; i <= to; i++) this.position[this.order[i]!] = i
  }
}

/** A predicate for one query's filters; platform checks are memoised per distinct key string. */
export function entryFilter(q: NodeQuery): (e: Entry) => boolean {
  const repo = q.repositoryUrl ? repositoryKey(q.repositoryUrl) : undefined
  const host = q.hostNode?.toLowerCase()
  const os = q.os ? platformMatcher(normalizePlatformValue(q.os), true) : undefined
  const acc = q.accelerator ? platformMatcher(normalizePlatformValue(q.accelerator), false) : undefined
  const ids = q.nodeIds ? new Set(q.nodeIds.map((id) => id.toLowerCase())) : undefined
  return (e) =>
    (q.includeBanned || !e.banned) &&
    (repo === undefined || e.repositoryKey.includes(repo)) &&
    (host === undefined || e.hostText.includes(host)) &&
    (os === undefined || os(e.osKeys)) &&
    (acc === undefined || acc(e.acceleratorKeys)) &&
    (ids === undefined || ids.has(e.id.toLowerCase())) &&
    (q.changedSince === undefined || e.updatedAt > q.changedSince)
}

/** Matches keys ('|a|b|') that declare nothing, OS Independent (for OS), the value, or a value under it. */
function platformMatcher(filter: string, osIndependentMatches: boolean): (keys: string) => boolean {
  const memo = new Map<string, boolean>()
  return (keys) => {
    let hit = memo.get(keys)
    if (hit === undefined) {
      hit =
        keys === '' ||
        (osIndependentMatches && keys.includes(`|${OS_INDEPENDENT}|`)) ||
        keys.includes(`|${filter}|`) ||
        keys.includes(`|${filter} :: `)
      memo.set(keys, hit)
    }
    return hit
  }
}
