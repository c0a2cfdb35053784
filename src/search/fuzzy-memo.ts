/**
 * A query term's typo expansions (the index's terms within its edit distance, in the order the radix tree's walk
 * finds them), remembered by term and distance: the walk is most of a typo-tolerant search's cost, and people search
 * the same words. Bounded by bytes, oldest dropped first; emptied by its owner whenever the tree's terms change.
 */
import { oldestFirst } from '../oldest-first'

export type Expansions = readonly (readonly [term: string, distance: number])[]

/** Bytes remembered at most (terms counted as their length: index terms are short lower-case words). */
export const FUZZY_MEMO_MAX_BYTES = 4 * 1024 * 1024
/** What an entry and each of its terms cost beside their text (Map entry, arrays, numbers). */
const ENTRY_OVERHEAD = 96
const TERM_OVERHEAD = 32

export class FuzzyMemo {
  private readonly entries = new Map<string, Expansions>()
  private readonly nextOldest = oldestFirst(this.entries)
  private held = 0

  constructor(private readonly maxBytes = FUZZY_MEMO_MAX_BYTES) {}

  /** The expansions of `term` within `distance`, from memory or from `walk` (then remembered). */
  get(term: string, distance: number, walk: () => Expansions): Expansions {
    const key = `${distance}:${term}`
    const known = this.entries.get(key)
    if (known) return known
    const found = walk()
    const size = cost(key, found)
    if (size > this.maxBytes) return found
    while (this.held + size > this.maxBytes) {
      const oldest = this.nextOldest()
      if (oldest === undefined) break
      this.held -= cost(oldest, this.entries.get(oldest)!)
      this.entries.delete(oldest)
    }
    this.entries.set(key, found)
    this.held += size
    return found
  }

  clear(): void {
    this.entries.clear()
    this.held = 0
  }

  /** Bytes held now (for tests). */
  get bytes(): number {
    return this.held
  }
}

function cost(key: string, expansions: Expansions): number {
  let size = key.length + ENTRY_OVERHEAD
  for (const [term] of expansions) size += term.length + TERM_OVERHEAD
  return size
}
