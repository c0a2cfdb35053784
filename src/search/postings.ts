/**
 * MiniSearch's postings (for each term and field, document -> term frequency) in typed arrays instead of a Map
 * each. At 100,000 nodes the index holds 2.2 million postings: as Map entries they took some 140 MB, most of the
 * index; here they take 6 bytes each. The object answers the part of Map that MiniSearch 7 uses on them (get, set,
 * has, delete, size, keys, iteration), so the library's own search and scoring, and the index's cleanup of
 * discarded documents (vacuum.ts), run unchanged.
 */
import type { MiniSearchInternals } from './minisearch-internals'

/**
 * Map-shaped postings of one term in one field: document short ids in ascending order, their frequencies beside.
 * A deleted posting keeps its place with frequency 0 until a quarter of them are such (MiniSearch deletes the
 * postings of a replaced document one by one as searches meet them: shifting a list of 100,000 each time made
 * searches during writes slower).
 */
export class Postings {
  private ids: Int32Array
  private freqs: Uint16Array
  /** Slots used, deleted ones included. */
  private n = 0
  private deleted = 0
  /** Where the last get() found its id: MiniSearch asks for each id in turn right after listing them. */
  private cursor = 0

  constructor(from: Map<number, number>) {
    this.ids = new Int32Array(from.size)
    this.freqs = new Uint16Array(from.size)
    // MiniSearch gives documents increasing short ids and adds a document's terms in one go: a Map's insertion
    // order is almost always ascending already.
    const entries = [...from]
    if (entries.some(([id], i) => i > 0 && id < entries[i - 1]![0])) entries.sort((a, b) => a[0] - b[0])
    for (const [id, freq] of entries) this.push(id, freq)
  }

  get size(): number {
    return this.n - this.deleted
  }

  get(id: number): number | undefined {
    const next = this.cursor + 1
    const at = next < this.n && this.ids[next] === id ? next : this.find(id)
    if (at >= this.n || this.ids[at] !== id || this.freqs[at] === 0) return undefined
    this.cursor = at
    return this.freqs[at]
  }

  has(id: number): boolean {
    return this.get(id) !== undefined
  }

  set(id: number, freq: number): this {
    const value = Math.max(1, Math.min(freq, 0xffff))
    const at = this.find(id)
    if (at < this.n && this.ids[at] === id) {
      if (this.freqs[at] === 0) this.deleted--
      this.freqs[at] = value
      return this
    }
    if (at === this.n) {
      this.push(id, value)
      return this
    }
    this.reserve(this.n + 1)
    this.ids.copyWithin(at + 1, at, this.n)
    this.freqs.copyWithin(at + 1, at, this.n)
    this.ids[at] = id
    this.freqs[at] = value
    this.n++
    return this
  }

  delete(id: number): boolean {
    const at = this.find(id)
    if (at >= this.n || this.ids[at] !== id || this.freqs[at] === 0) return false
    this.freqs[at] = 0
    if (++this.deleted * 4 > this.n) this.sweep()
    return true
  }

  /** A copy: MiniSearch deletes postings of removed documents while it walks them. */
  keys(): IterableIterator<number> {
    return this.live().ids.values()
  }

  *[Symbol.iterator](): IterableIterator<[number, number]> {
    const { ids, freqs } = this.live()
    for (let i = 0; i < ids.length; i++) yield [ids[i]!, freqs[i]!]
  }

  entries(): IterableIterator<[number, number]> {
    return this[Symbol.iterator]()
  }

  /** Copies of the ids and frequencies of the postings not deleted, in ascending id order. */
  live(): { ids: Int32Array; freqs: Uint16Array } {
    if (!this.deleted) return { ids: this.ids.slice(0, this.n), freqs: this.freqs.slice(0, this.n) }
    const ids = new Int32Array(this.size)
    const freqs = new Uint16Array(this.size)
    let k = 0
    for (let i = 0; i < this.n; i++) {
      if (this.freqs[i] === 0) continue
      ids[k] = this.ids[i]!
      freqs[k++] = this.freqs[i]!
    }
    return { ids, freqs }
  }

  /** Drops the deleted postings' places. */
  private sweep() {
    let k = 0
    for (let i = 0; i < this.n; i++) {
      if (this.freqs[i] === 0) continue
      this.ids[k] = this.ids[i]!
      this.freqs[k++] = this.freqs[i]!
    }
    this.n = k
    this.deleted = 0
    this.cursor = 0
  }

  /** The first position whose id is not below `id`. */
  private find(id: number): number {
    const n = this.n
    if (n === 0 || this.ids[n - 1]! < id) return n
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.ids[mid]! < id) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  private push(id: number, freq: number) {
    this.reserve(this.n + 1)
    this.ids[this.n] = id
    this.freqs[this.n] = Math.max(1, Math.min(freq, 0xffff))
    this.n++
  }

  private reserve(size: number) {
    if (size <= this.ids.length) return
    const capacity = Math.max(4, Math.ceil(size * 1.25))
    const ids = new Int32Array(capacity)
    ids.set(this.ids.subarray(0, this.n))
    const freqs = new Uint16Array(capacity)
    freqs.set(this.freqs.subarray(0, this.n))
    this.ids = ids
    this.freqs = freqs
  }
}

/** MiniSearch's term index: term -> field id -> that field's postings (Maps, as MiniSearch makes them). */
/** Replaces every postings Map (new terms and fields since the last call) with Postings. */
export function compactPostings(index: MiniSearchInternals['_index']): void {
  for (const [, fields] of index) {
    for (const [fieldId, postings] of fields) {
      if (postings instanceof Map) fields.set(fieldId, new Postings(postings))
    }
  }
}
