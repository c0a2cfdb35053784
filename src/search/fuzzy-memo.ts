/**
 * A query term's typo expansions (the index's terms within its edit distance, in the order the radix tree's walk
 * finds them), remembered by term and distance: the walk is most of a typo-tolerant search's cost, and people search
 * the same words. Bounded by bytes (src/bounded-cache.ts); emptied by its owner whenever the tree's terms change.
 */
import { BoundedCache } from '../bounded-cache'

export type Expansions = readonly (readonly [term: string, distance: number])[]

/** Bytes remembered at most (terms counted as their length: index terms are short lower-case words). */
export const FUZZY_MEMO_MAX_BYTES = 4 * 1024 * 1024
/** What an entry and each of its terms cost beside their text (Map entry, arrays, numbers). */
const ENTRY_OVERHEAD = 96
const TERM_OVERHEAD = 32

export class FuzzyMemo {
  private readonly entries: BoundedCache<Expansions>

  constructor(maxBytes = FUZZY_MEMO_MAX_BYTES) {
    this.entries = new BoundedCache(maxBytes)
  }

  /** The expansions of `term` within `distance`, from memory or from `walk` (then remembered). */
  get(term: string, distance: number, walk: () => Expansions): Expansions {
    const key = `${distance}:${term}`
    const known = this.entries.get(key)
    if (known) return known
    const found = walk()
    if (this.entries.admits(key)) this.entries.set(key, found, cost(key, found))
    return found
  }

  clear(): void {
    this.entries.clear()
  }

  /** Bytes held now (for tests). */
  get bytes(): number {
    return this.entries.bytes
  }
}

function cost(key: string, expansions: Expansions): number {
  let size = key.length + ENTRY_OVERHEAD
  for (const [term] of expansions) size += term.length + TERM_OVERHEAD
  return size
}
