/** The index's nodes (ordering keys, what tells a change), their filter facts and the order lists walk. */
import { repositoryKey } from '../domain/platform'
import type { SearchDoc } from '../store/search-docs'
import type { NodeQuery } from '../domain/node-query'
import { Candidates, Facts, PlatformKeys, type Plan, type SlotFacts } from './catalog-facts'
import { SubstringIndex } from './substring-index'
import { grown } from '../typed-arrays'

/** What the list order compares of a node. */
export interface OrderKeys {
  id: string
  ranking: number
  downloads: number
}

/**
 * Popularity's share of relevance: 1 + 0.5 per half decade of downloads (0 -> 1, 10 -> 2, 1,000 -> 4).
 * Bucketed, so that a single download seldom changes any score.
 */
export function popularityBoost(downloads: number): number {
  return 1 + 0.5 * Math.floor(2 * Math.log10(1 + Math.max(0, downloads)))
}

export type Change = 'none' | 'order' | 'content'

/** A 53-bit hash of a text as a plain number (two 32-bit hashes): no BigInt, no string kept to compare. */
export function hash53(text: string): number {
  return Bun.hash.xxHash32(text, 0) * 2 ** 21 + (Bun.hash.xxHash32(text, 1) >>> 11)
}

/** Ids handed out and remembered at most (some 160 KiB of Map entries; the strings are the catalogue's own). */
export const HANDED_OUT_HELD = 4096

/**
 * The nodes the index holds, a slot each (never reused), their keys in columns: typed arrays by slot, not an object
 * a node (100,000 of them held 10.7 MiB of the heap, and each count changed made a new one).
 */
export class Catalog {
  /** Each slot's node id (undefined once removed). */
  private readonly ids: (string | undefined)[] = []
  private ranking = new Float64Array(1024)
  private downloads = new Float64Array(1024)
  /**
   * hash53 of the repository key, and of the lower-cased host node names joined by newlines: enough to tell a change.
   * The texts themselves are the substring indexes' own.
   */
  private repositoryHash = new Float64Array(1024)
  private hostHash = new Float64Array(1024)
  private readonly slotById = new Map<string, number>()
  /** Ids handed out lately, by their own strings (handOut). */
  private readonly handedOut = new Map<string, number>()
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
  /**
   * The filter facts of the slot at each position of the order, once it is sorted: a walk of the whole order reads
   * them in sequence. They move with the slots (shiftFacts beside each copyWithin or splice of the order; factsAt where
   * one slot lands or its facts change), not where positions are renumbered: writing them there read each slot's facts
   * again, and cost a flush of 80 counts twice its time. Read by slot, in list order, each slot's facts were a load
   * from anywhere in three arrays, and a walk of 100,000 slots with an OS filter took 1.6-2.0 ms against 0.5
   * (scripts/bench/order-walk.ts).
   */
  private bannedAt = new Uint8Array(1024)
  private osAt = new Uint32Array(1024)
  private acceleratorAt = new Uint32Array(1024)
  private sorted = true
  size = 0

  /** The node a slot holds (undefined: none, or removed). */
  idOf(slot: number): string | undefined {
    return this.ids[slot]
  }

  /** The download count of the node a slot holds. */
  downloadsOf(slot: number): number {
    return this.downloads[slot] ?? 0
  }

  /** What the order compares of a slot's node, as an object (for tests: the index reads the columns). */
  keysOf(slot: number): OrderKeys | undefined {
    const id = this.ids[slot]
    return id === undefined ? undefined : { id, ranking: this.ranking[slot]!, downloads: this.downloads[slot]! }
  }

  /** The order of lists without a keyword: search_ranking desc, downloads desc, id asc. */
  private compare(a: number, b: number): number {
    const { ranking, downloads } = this
    const idA = this.ids[a]!
    const idB = this.ids[b]!
    return ranking[b]! - ranking[a]! || downloads[b]! - downloads[a]! || (idA < idB ? -1 : idA > idB ? 1 : 0)
  }

  /** The slot of the node with this id, in any case. */
  slotOf(id: string): number | undefined {
    return this.handedOut.get(id) ?? this.slotById.get(id.toLowerCase())
  }

  /**
   * The id of a live slot's node, handed out (a page of a search): that very string is looked up again, two or three
   * times for each node of the page (the node cache's documents' places and counts), and is then found by itself,
   * its hash already known, instead of lower-cased into a new string and hashed again (most ids have capitals). A
   * list page at 100,000 nodes cost the server 9% less CPU. Emptied when a node is removed (its slot dies) and past
   * HANDED_OUT_HELD ids.
   */
  handOut(slot: number): string {
    const id = this.ids[slot]!
    if (this.handedOut.size >= HANDED_OUT_HELD) this.handedOut.clear()
    this.handedOut.set(id, slot)
    return id
  }

  /** Position of a slot in the list order (lower comes first). */
  rank(slot: number): number {
    const at = this.position[slot]
    return at ? at - 1 : Number.MAX_SAFE_INTEGER
  }

  /** Adds or replaces a node; during a bulk load (`deferOrder`) the order is built once by finishLoad(). */
  upsert(doc: SearchDoc, deferOrder = false): { slot: number; change: Change } {
    const existing = this.slotOf(doc.id)
    const slot = existing ?? this.ids.length
    if (slot >= this.ranking.length) this.grow(2 * slot)
    const hostText = [...new Set(doc.hostNodes.map((n) => n.toLowerCase()))].join('\n')
    const facts: SlotFacts = {
      banned: doc.status === 'banned',
      updated: Date.parse(doc.updatedAt),
      osId: this.platforms.id(doc.osKeys),
      acceleratorId: this.platforms.id(doc.acceleratorKeys),
    }
    const repositoryHash = hash53(doc.repositoryKey)
    const hostHash = hash53(hostText)
    const before =
      existing === undefined
        ? undefined
        : {
            id: this.ids[slot]!,
            ranking: this.ranking[slot]!,
            downloads: this.downloads[slot]!,
            repositoryHash: this.repositoryHash[slot]!,
            hostHash: this.hostHash[slot]!,
            sameFacts: this.facts.same(slot, facts),
          }
    this.ids[slot] = doc.id
    this.ranking[slot] = doc.searchRanking
    this.downloads[slot] = doc.downloads
    this.repositoryHash[slot] = repositoryHash
    this.hostHash[slot] = hostHash
    this.facts.set(slot, facts)
    if (this.sorted && this.position[slot]) this.factsAt(this.position[slot]! - 1, slot)
    this.slotById.set(doc.id.toLowerCase(), slot)
    if (!before || before.repositoryHash !== repositoryHash) this.repositories.set(slot, doc.repositoryKey)
    if (!before || before.hostHash !== hostHash) this.hostNodes.set(slot, hostText)
    if (!before) {
      this.size++
      if (deferOrder) {
        this.order.push(slot)
        this.sorted = false
      } else this.place(slot)
      return { slot, change: 'content' }
    }
    const keysChanged = before.ranking !== doc.searchRanking || before.downloads !== doc.downloads || before.id !== doc.id
    // Moved now whenever the order is sorted (a bulk load's finishLoad() sorts it otherwise): moved while it was not,
    // a slot without a place yet overwrote the order's last one.
    const moved = this.sorted && keysChanged && this.reposition(slot) > 0
    const sameFacts =
      before.sameFacts &&
      before.repositoryHash === repositoryHash &&
      before.hostHash === hostHash &&
      popularityBoost(before.downloads) === popularityBoost(doc.downloads)
    return { slot, change: !sameFacts ? 'content' : moved ? 'order' : 'none' }
  }

  /** A new download count for a node already held (undefined when it is not): the order follows at once. */
  setDownloads(id: string, downloads: number): Change | undefined {
    const slot = this.slotOf(id)
    if (slot === undefined) return undefined
    const before = this.downloads[slot]!
    if (before === downloads) return 'none'
    this.downloads[slot] = downloads
    // During a bulk load the order is built once by finishLoad().
    const moved = this.sorted && this.reposition(slot) > 0
    if (popularityBoost(before) !== popularityBoost(downloads)) return 'content'
    return moved ? 'order' : 'none'
  }

  /**
   * New download counts of many nodes at once (a counter flush: tens to thousands a second at 100,000 nodes). Those not
   * held are returned in `unknown`. Each count moves its node in turn (reposition: the slots between its old and new
   * place shift) until the shifts pass the size of the order (the last move may take them to nearly twice it); the
   * rest then settle in one pass (resettle), a walk of the whole order. At 100,000 nodes a pass is some 3 ms; a flush
   * of 10 counts (ordinary traffic) moves them in 0.1-0.2 ms, and a flush of thousands costs at most about three
   * passes (docs/benchmarks.md, "Count flushes").
   */
  setDownloadsMany(counts: Iterable<readonly [string, number]>): { change: Change; unknown: string[] } {
    const unknown: string[] = []
    const unsettled: number[] = []
    let content = false
    let reordered = false
    /** Slots shifted so far by moves one at a time; past the order's size, the rest wait for resettle(). */
    let shifted = 0
    for (const [id, downloads] of counts) {
      const slot = this.slotOf(id)
      if (slot === undefined) {
        unknown.push(id)
        continue
      }
      const before = this.downloads[slot]!
      if (before === downloads) continue
      this.downloads[slot] = downloads
      content ||= popularityBoost(before) !== popularityBoost(downloads)
      if (!this.sorted) continue
      // Moved at once while every other slot is in order (none waits unsettled yet), as reposition() needs.
      if (shifted > this.order.length) unsettled.push(slot)
      else {
        const distance = this.reposition(slot)
        shifted += distance
        reordered ||= distance > 0
      }
    }
    if (unsettled.length) reordered = this.resettle(unsettled) || reordered
    return { change: content ? 'content' : reordered ? 'order' : 'none', unknown }
  }

  /** Puts slots whose keys changed back in order (the others are in order); true when the order changed. */
  private resettle(given: number[]): boolean {
    if (given.length === 1) return this.reposition(given[0]!) > 0
    // Each slot once, however often the counts named its node: a slot placed twice would stand twice in the order.
    const moved = new Uint8Array(this.ids.length)
    const slots: number[] = []
    for (const slot of given) {
      if (moved[slot]) continue
      moved[slot] = 1
      slots.push(slot)
    }
    slots.sort((a, b) => this.compare(a, b))
    const before = this.order
    const rest: number[] = []
    for (const slot of before) if (!moved[slot]) rest.push(slot)
    // Each moved slot's place among the others by binary search (they are few): no comparison per unmoved slot.
    const after = new Array<number>(before.length)
    let n = 0
    let from = 0
    for (const slot of slots) {
      let lo = from
      let hi = rest.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (this.compare(rest[mid]!, slot) < 0) lo = mid + 1
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
      this.factsAt(i, after[i]!)
    }
    this.order = after
    return changed
  }

  remove(id: string): number | undefined {
    const slot = this.slotOf(id)
    if (slot === undefined) return undefined
    this.slotById.delete(id.toLowerCase())
    this.handedOut.clear()
    this.ids[slot] = undefined
    this.facts.set(slot, undefined)
    this.repositories.set(slot, undefined)
    this.hostNodes.set(slot, undefined)
    // Positions are only kept once the order is sorted (not during a bulk load).
    const at = this.sorted ? this.position[slot]! - 1 : this.order.indexOf(slot)
    this.order.splice(at, 1)
    if (this.sorted) {
      this.shiftFacts(at, at + 1, this.order.length + 1)
      this.renumber(at, this.order.length - 1)
    }
    this.size--
    return slot
  }

  /** Sorts the order once after a bulk load. */
  finishLoad(): void {
    if (this.sorted) return
    this.order.sort((a, b) => this.compare(a, b))
    this.reserveFacts()
    for (let i = 0; i < this.order.length; i++) this.factsAt(i, this.order[i]!)
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
    const candidates = lists.length ? new Candidates(lists, this.ids.length) : undefined
    const os = q.os ? this.platforms.matching(q.os, true) : undefined
    const acc = q.accelerator ? this.platforms.matching(q.accelerator, false) : undefined
    const since = q.changedSince ? Date.parse(q.changedSince) : undefined
    const { banned, os: osOf, accelerator: accOf, updated } = this.facts
    const includeBanned = q.includeBanned
    const marks = candidates?.marks
    return {
      candidates,
      keep: (slot) =>
        (includeBanned || banned[slot] === 0) &&
        (os === undefined || os[osOf[slot]!] === 1) &&
        (acc === undefined || acc[accOf[slot]!] === 1) &&
        (since === undefined || updated[slot]! > since),
      // The facts by position, in sequence (the rarer filters, time and candidates, by slot); every slot is written
      // and the count moves by its test's 0 or 1, so no branch depends on a slot: keep() at each slot mispredicted
      // about as often as slots passed (docs/benchmarks.md, "Walks of the whole order").
      collect: (out, at) => {
        const { order, bannedAt, osAt, acceleratorAt } = this
        let n = at
        for (let i = 0; i < order.length; i++) {
          const slot = order[i]!
          out[n] = slot
          n +=
            (includeBanned ? 1 : 1 - bannedAt[i]!) &
            (os === undefined ? 1 : os[osAt[i]!]!) &
            (acc === undefined ? 1 : acc[acceleratorAt[i]!]!) &
            (since === undefined ? 1 : Number(updated[slot]! > since)) &
            (marks === undefined ? 1 : marks[slot]!)
        }
        return n
      },
    }
  }

  /** Binary search for where a slot not in the order belongs in it. */
  private insertionPoint(slot: number): number {
    let lo = 0
    let hi = this.order.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.compare(this.order[mid]!, slot) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  private place(slot: number) {
    const at = this.insertionPoint(slot)
    this.order.splice(at, 0, slot)
    this.reserveFacts()
    this.shiftFacts(at + 1, at, this.order.length - 1)
    this.factsAt(at, slot)
    this.renumber(at, this.order.length - 1)
  }

  /**
   * Moves a slot whose keys changed; how many places it moved (0: its place among the others is the same). In place,
   * shifting only the slots between its old and new place: a download count moves a node a few places, and two
   * splices of the whole order (100,000 slots) cost every counted node tens of microseconds.
   */
  private reposition(slot: number): number {
    const order = this.order
    const from = this.position[slot]! - 1
    let to = from
    if (from > 0 && this.compare(order[from - 1]!, slot) > 0) {
      // Earlier: the first place in [0, from) whose entry sorts after this one.
      let lo = 0
      let hi = from - 1
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (this.compare(order[mid]!, slot) > 0) hi = mid
        else lo = mid + 1
      }
      to = lo
      order.copyWithin(to + 1, to, from)
      this.shiftFacts(to + 1, to, from)
    } else if (from < order.length - 1 && this.compare(order[from + 1]!, slot) < 0) {
      // Later: the last place in (from, end) whose entry sorts before this one.
      let lo = from + 1
      let hi = order.length - 1
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1
        if (this.compare(order[mid]!, slot) < 0) lo = mid
        else hi = mid - 1
      }
      to = lo
      order.copyWithin(from, from + 1, to + 1)
      this.shiftFacts(from, from + 1, to + 1)
    }
    if (to === from) return 0
    order[to] = slot
    this.factsAt(to, slot)
    this.renumber(Math.min(from, to), Math.max(from, to))
    return Math.abs(to - from)
  }

  /** The positions of the slots at [from, to] of the order. */
  private renumber(from: number, to: number) {
    if (this.position.length < this.ids.length) this.position = grown(this.position, 2 * this.ids.length)
    for (let i = from; i <= to; i++) this.position[this.order[i]!] = i + 1
  }

  /** Room in the facts by position for the whole order. */
  private reserveFacts() {
    if (this.bannedAt.length >= this.order.length) return
    const size = 2 * this.order.length
    this.bannedAt = grown(this.bannedAt, size)
    this.osAt = grown(this.osAt, size)
    this.acceleratorAt = grown(this.acceleratorAt, size)
  }

  /** The facts by position at [start, end) copied to `target` on, as the order's slots were (copyWithin). */
  private shiftFacts(target: number, start: number, end: number) {
    this.bannedAt.copyWithin(target, start, end)
    this.osAt.copyWithin(target, start, end)
    this.acceleratorAt.copyWithin(target, start, end)
  }

  /** The facts of `slot` as those of position `i` of the order. */
  private factsAt(i: number, slot: number) {
    this.bannedAt[i] = this.facts.banned[slot]!
    this.osAt[i] = this.facts.os[slot]!
    this.acceleratorAt[i] = this.facts.accelerator[slot]!
  }

  private grow(size: number) {
    this.ranking = grown(this.ranking, size)
    this.downloads = grown(this.downloads, size)
    this.repositoryHash = grown(this.repositoryHash, size)
    this.hostHash = grown(this.hostHash, size)
  }
}
