/** What the catalogue keeps per slot for filters: platform key ids, the filter facts in typed arrays, and candidates. */
import { normalizePlatformValue, OS_INDEPENDENT } from '../domain/platform'
import { grown } from '../typed-arrays'

/** The facts of a node that filters test. */
export interface SlotFacts {
  banned: boolean
  /** updated_at in epoch milliseconds. */
  updated: number
  /** Ids of the distinct OS and accelerator key strings ('|a|b|'), see PlatformKeys. */
  osId: number
  acceleratorId: number
}

/** Distinct platform key strings get small integer ids; a filter is then evaluated once per distinct value. */
export class PlatformKeys {
  private readonly ids = new Map<string, number>()
  readonly keys: string[] = []

  id(keys: string): number {
    let id = this.ids.get(keys)
    if (id === undefined) {
      id = this.keys.length
      this.keys.push(keys)
      this.ids.set(keys, id)
    }
    return id
  }

  /** For each id, 1 if its keys declare nothing, OS Independent (when it counts), the value or one under it; else 0. */
  matching(filter: string, osIndependentMatches: boolean): Uint8Array {
    const f = normalizePlatformValue(filter)
    return Uint8Array.from(this.keys, (keys) =>
      keys === '' || (osIndependentMatches && keys.includes(`|${OS_INDEPENDENT}|`)) || keys.includes(`|${f}|`) || keys.includes(`|${f} :: `)
        ? 1
        : 0,
    )
  }
}

/**
 * A query's cheap per-slot test, and the candidates its selective filters allow (undefined: all). `keep` and `collect`
 * answer the same test two ways (by slot, and over the whole order by position): a filter added to one goes in the
 * other, and the catalogue's tests compare them after every kind of change to the order.
 */
export interface Plan {
  keep(slot: number): boolean
  candidates?: Candidates
  /**
   * Writes the slots of the list order that are candidates and kept into `out` from `at`, in order; returns where they
   * end. `out` has room for `at` and the whole order. Only once the order is sorted (not during a bulk load).
   */
  collect(out: Int32Array, at: number): number
}

/**
 * The slots every one of a query's selective filters allows: marks by slot, not a Set, as a one-letter host node or
 * repository search allows most of the catalogue (80,000 slots at 100,000 nodes: a Set of them, and sorting them,
 * took tens of milliseconds).
 */
export class Candidates {
  /** 1 for each candidate slot, else 0. */
  readonly marks: Uint8Array
  /** The candidates, in the order of the shortest list. */
  readonly slots: readonly number[]

  /** `lists`: the slots each filter allows, each slot once in a list. */
  constructor(lists: readonly (readonly number[])[], slotCount: number) {
    this.marks = new Uint8Array(slotCount)
    if (lists.length === 1) {
      // One filter (most queries with any): its slots are the candidates, marked once.
      this.slots = lists[0]!
      for (const slot of this.slots) this.marks[slot] = 1
      return
    }
    const smallest = lists.reduce((a, b) => (b.length < a.length ? b : a))
    // A slot's mark counts the lists holding it, in turn: only a slot every earlier list held moves on.
    lists.forEach((list, i) => {
      for (const slot of list) if (this.marks[slot] === i) this.marks[slot] = i + 1
    })
    this.slots = smallest.filter((slot) => this.marks[slot] === lists.length)
    this.marks.fill(0)
    for (const slot of this.slots) this.marks[slot] = 1
  }

  has(slot: number): boolean {
    return this.marks[slot] === 1
  }

  get size(): number {
    return this.slots.length
  }
}

/**
 * The facts filters test, one typed array each, by slot: a list without a keyword tests every node, and reading
 * four numbers from arrays costs a fraction of reading them from 100,000 objects scattered over the heap.
 */
export class Facts {
  banned = new Uint8Array(1024)
  /** Ids of platform lists (PlatformKeys): publishers name their platforms, so there may be more than 16 bits count. */
  os = new Uint32Array(1024)
  accelerator = new Uint32Array(1024)
  updated = new Float64Array(1024)

  set(slot: number, e: SlotFacts | undefined) {
    if (slot >= this.banned.length) this.grow(Math.max(slot + 1, this.banned.length * 2))
    this.banned[slot] = e ? (e.banned ? 1 : 0) : 1
    this.os[slot] = e?.osId ?? 0
    this.accelerator[slot] = e?.acceleratorId ?? 0
    this.updated[slot] = e?.updated ?? 0
  }

  /** Whether a slot's facts are these (false for a slot removed, or never set). */
  same(slot: number, e: SlotFacts): boolean {
    return (
      this.banned[slot] === (e.banned ? 1 : 0) &&
      this.os[slot] === e.osId &&
      this.accelerator[slot] === e.acceleratorId &&
      this.updated[slot] === e.updated
    )
  }

  private grow(size: number) {
    this.banned = grown(this.banned, size)
    this.os = grown(this.os, size)
    this.accelerator = grown(this.accelerator, size)
    this.updated = grown(this.updated, size)
  }
}
