/** The index's node entries (ordering keys, what tells a change), their filter facts and the order lists walk. */
import { repositoryKey } from '../domain/platform'
import type { SearchDoc } from '../store/search-docs'
import type { NodeQuery } from '../domain/node-query'
import { Candidates, Facts, PlatformKeys, type Plan, type SlotFacts } from './catalog-facts'
import { SubstringIndex } from './substring-index'
import { grown } from './typed-arrays'

export interface Entry extends SlotFacts {
  slot: number
  id: string
  ranking: number
  downloads: number
  /**
   * hash53 of the repository key, and of the lower-cased host node names joined by newlines: enough to tell a change.
   * The texts themselves are the substring indexes' own.
   */
  repositoryHash: number
  hostHash: number
}

/**
 * Popularity's share of relevance: 1 + 0.5 per half decade of downloads (0 -> 1, 10 -> 2, 1,000 -> 4).
 * Bucketed, so that a single download seldom changes any score.
 */
export function popularityBoost(downloads: number): number {
  return 1 + 0.5 * Math.floor(2 * Math.log10(1 + Math.max(0, downloads)))
}

/** The order of lists without a keyword: search_ranking desc, downloads desc, id asc. */
function compareEntries(a: Entry, b: Entry): number {
  return b.ranking - a.ranking || b.downloads - a.downloads || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

export type Change = 'none' | 'order' | 'content'

/** A 53-bit hash of a text as a plain number (two 32-bit hashes): no BigInt, no string kept to compare. */
export function hash53(text: string): number {
  return Bun.hash.xxHash32(text, 0) * 2 ** 21 + (Bun.hash.xxHash32(text, 1) >>> 11)
}

export class Catalog {
  private readonly entries: (Entry | undefined)[] = []
  private readonly slotById = new Map<string, number>()
  private readonly platforms = new PlatformKeys()
  private readonly facts = new Facts()
  private readonly repositories = new SubstringIndex()
  private readonly hostNodes = new SubstringIndex()
  /**
   * Slots in list order, and each slot's position in it plus one (0: none yet), in a typed array: a keyword query
   * reads the position of each of its matches (96,000 for a short prefix at 100,000 nodes), and from a JS array
   * filled out of slot order each read cost some 50 ns.
   */
  private order: number[] = []
  private position = new Int32Array(1024)
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
    const at = this.position[slot]
    return at ? at - 1 : Number.MAX_SAFE_INTEGER
  }

  /** Adds or replaces a node; during a bulk load (`deferOrder`) the order is built once by finishLoad(). */
  upsert(doc: SearchDoc, deferOrder = false): { slot: number; change: Change } {
    const existing = this.slotOf(doc.id)
    const slot = existing ?? this.entries.length
    const before = existing === undefined ? undefined : this.entries[existing]
    const hostText = [...new Set(doc.hostNodes.map((n) => n.toLowerCase()))].join('\n')
    const entry: Entry = {
      slot,
      id: doc.id,
      banned: doc.status === 'banned',
      ranking: doc.searchRanking,
      downloads: doc.downloads,
      updated: Date.parse(doc.updatedAt),
      repositoryHash: hash53(doc.repositoryKey),
      hostHash: hash53(hostText),
      osId: this.platforms.id(doc.osKeys),
      acceleratorId: this.platforms.id(doc.acceleratorKeys),
    }
    this.entries[slot] = entry
    this.facts.set(slot, entry)
    this.slotById.set(doc.id.toLowerCase(), slot)
    if (!before || before.repositoryHash !== entry.repositoryHash) this.repositories.set(slot, doc.repositoryKey)
    if (!before || before.hostHash !== entry.hostHash) this.hostNodes.set(slot, hostText)
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
      before.banned === entry.banned &&
      before.updated === entry.updated &&
      before.repositoryHash === entry.repositoryHash &&
      before.osId === entry.osId &&
      before.acceleratorId === entry.acceleratorId &&
      before.hostHash === entry.hostHash &&
      popularityBoost(before.downloads) === popularityBoost(entry.downloads)
    return { slot, change: !sameFacts ? 'content' : moved ? 'order' : 'none' }
  }

  /** A new download count for a node already held (undefined when it is not): the order follows at once. */
  setDownloads(id: string, downloads: number): Change | undefined {
    const slot = this.slotOf(id)
    const before = slot === undefined ? undefined : this.entries[slot]
    if (slot === undefined || !before) return undefined
    if (before.downloads === downloads) return 'none'
    this.entries[slot] = { ...before, downloads }
    // During a bulk load the order is built once by finishLoad().
    const moved = this.sorted && this.reposition(slot)
    if (popularityBoost(before.downloads) !== popularityBoost(downloads)) return 'content'
    return moved ? 'order' : 'none'
  }

  /**
   * New download counts of many nodes at once (a counter flush: hundreds at 100,000 nodes). Those not held are
   * returned in `unknown`. The order settles once for all of them: the moved slots are taken out, sorted and merged
   * back in one pass, where moving each in turn shifts thousands of slots for each (a node's first download jumps
   * every node of none).
   */
  setDownloadsMany(counts: Iterable<readonly [string, number]>): { change: Change; unknown: string[] } {
    const unknown: string[] = []
    const moved: number[] = []
    let content = false
    for (const [id, downloads] of counts) {
      const slot = this.slotOf(id)
      const before = slot === undefined ? undefined : this.entries[slot]
      if (slot === undefined || !before) {
        unknown.push(id)
        continue
      }
      if (before.downloads === downloads) continue
      this.entries[slot] = { ...before, downloads }
      content ||= popularityBoost(before.downloads) !== popularityBoost(downloads)
      moved.push(slot)
    }
    const reordered = this.sorted && moved.length > 0 && this.resettle(moved)
    return { change: content ? 'content' : reordered ? 'order' : 'none', unknown }
  }

  /** Puts slots whose keys changed back in order (the others are in order); true when the order changed. */
  private resettle(slots: number[]): boolean {
    if (slots.length === 1) return this.reposition(slots[0]!)
    const entries = this.entries
    const moved = new Uint8Array(entries.length)
    for (const slot of slots) moved[slot] = 1
    slots.sort((a, b) => compareEntries(entries[a]!, entries[b]!))
    const before = this.order
    const rest: number[] = []
    for (const slot of before) if (!moved[slot]) rest.push(slot)
    // Each moved slot's place among the others by binary search (they are few): no comparison per unmoved slot.
    const after = new Array<number>(before.length)
    let n = 0
    let from = 0
    for (const slot of slots) {
      const entry = entries[slot]!
      let lo = from
      let hi = rest.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (compareEntries(entries[rest[mid]!]!, entry) < 0) lo = mid + 1
        else hi = mid
      }
      while (from < lo) after[n++] = rest[from++]!
      after[n++] = slot
    }
    while (from < rest.length) after[n++] = rest[from++]!
    let changed = false
    for (let i = 0; i < after.length; i++) {
      if (after[i] === before[i]) continue
      changed = true
      this.position[after[i]!] = i + 1
    }
    this.order = after
    return changed
  }

  remove(id: string): number | undefined {
    const slot = this.slotOf(id)
    const entry = slot === undefined ? undefined : this.entries[slot]
    if (slot === undefined || !entry) return undefined
    this.slotById.delete(id.toLowerCase())
    this.entries[slot] = undefined
    this.facts.set(slot, undefined)
    this.repositories.set(slot, undefined)
    this.hostNodes.set(slot, undefined)
    // Positions are only kept once the order is sorted (not during a bulk load).
    const at = this.sorted ? this.position[slot]! - 1 : this.order.indexOf(slot)
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

  /** Builds the substring indexes' stale parts until `deadline` (at least one step); true when some are left. */
  prepareSubstrings(deadline: number): boolean {
    return this.repositories.rebuildStale(deadline) || this.hostNodes.rebuildStale(deadline)
  }

  /** Slots in list order. */
  ordered(): readonly number[] {
    return this.order
  }

  /**
   * Slots of nodes providing a host node named exactly `name` (ignoring case), in list order: a line of their host
   * node text. Found through the substring index (its blocks' filters of whole lines), not a Map of every name:
   * 100,000 nodes provide some 700,000 distinct names, and a Map of their hashes held 28 MB of the heap for a lookup
   * the filters answer in microseconds.
   */
  hostNodeOwners(name: string): number[] {
    return this.hostNodes.slotsWithLine(name.toLowerCase()).sort((a, b) => this.rank(a) - this.rank(b))
  }

  /** How to answer the filters of a query: selective ones give candidates, the rest a per-entry test. */
  plan(q: NodeQuery): Plan {
    const lists: number[][] = []
    if (q.repositoryUrl) lists.push(this.repositories.search(repositoryKey(q.repositoryUrl)))
    if (q.hostNode) lists.push(this.hostNodes.search(q.hostNode.toLowerCase()))
    if (q.nodeIds) lists.push([...new Set(q.nodeIds.flatMap((id) => this.slotOf(id) ?? []))])
    const candidates = lists.length ? new Candidates(lists, this.entries.length) : undefined
    const os = q.os ? this.platforms.matching(q.os, true) : undefined
    const acc = q.accelerator ? this.platforms.matching(q.accelerator, false) : undefined
    const since = q.changedSince ? Date.parse(q.changedSince) : undefined
    const { banned, os: osOf, accelerator: accOf, updated } = this.facts
    const includeBanned = q.includeBanned
    return {
      candidates,
      keep: (slot) =>
        (includeBanned || banned[slot] === 0) &&
        (os === undefined || os[osOf[slot]!] === true) &&
        (acc === undefined || acc[accOf[slot]!] === true) &&
        (since === undefined || updated[slot]! > since),
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

  /**
   * Moves a slot whose keys changed; true when its place among the others changed. In place, shifting only the
   * slots between its old and new place: a download count moves a node a few places, and two splices of the whole
   * order (100,000 slots) cost every counted node tens of microseconds.
   */
  private reposition(slot: number): boolean {
    const order = this.order
    const from = this.position[slot]! - 1
    const entry = this.entries[slot]!
    let to = from
    if (from > 0 && compareEntries(this.entries[order[from - 1]!]!, entry) > 0) {
      // Earlier: the first place in [0, from) whose entry sorts after this one.
      let lo = 0
      let hi = from - 1
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (compareEntries(this.entries[order[mid]!]!, entry) > 0) hi = mid
        else lo = mid + 1
      }
      to = lo
      order.copyWithin(to + 1, to, from)
    } else if (from < order.length - 1 && compareEntries(this.entries[order[from + 1]!]!, entry) < 0) {
      // Later: the last place in (from, end) whose entry sorts before this one.
      let lo = from + 1
      let hi = order.length - 1
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1
        if (compareEntries(this.entries[order[mid]!]!, entry) < 0) lo = mid
        else hi = mid - 1
      }
      to = lo
      order.copyWithin(from, from + 1, to + 1)
    }
    if (to === from) return false
    order[to] = slot
    this.renumber(Math.min(from, to), Math.max(from, to))
    return true
  }

  private renumber(from: number, to: number) {
    if (this.position.length < this.entries.length) this.position = grown(this.position, 2 * this.entries.length)
    for (let i = from; i <= to; i++) this.position[this.order[i]!] = i + 1
  }
}
