/**
 * Which keys a nearly full cache was asked for and missed lately: a "doorkeeper", as in TinyLFU, without its frequency
 * sketch. A cache lets a newcomer in only if its key was missed lately, so that the long tail of a large catalogue
 * (keys seldom asked for again) does not push out what is.
 *
 * Misses are remembered as 32-bit hashes of their keys: a few bytes each whatever a key's length (list answers are
 * keyed by URL). Two keys of one hash let one newcomer in early; nothing is ever answered from it. A miss is
 * remembered for two rounds, each as long as the cache held entries when it began, within these bounds.
 */
const MIN_ROUND = 256
const MAX_ROUND = 65_536

const hashOf = (key: string) => Bun.hash.xxHash32(key)

export class Doorkeeper {
  /** The current round, and the one before. */
  private missed = new Set<number>()
  private missedBefore = new Set<number>()
  private round = MIN_ROUND

  /** `entries`: how many entries the cache holds now (a round's length). */
  constructor(private readonly entries: () => number) {}

  /** Whether `key` was missed lately; if it was not, this miss is remembered. */
  lets(key: string): boolean {
    const hash = hashOf(key)
    if (this.missed.has(hash) || this.missedBefore.has(hash)) return true
    this.add(hash)
    return false
  }

  /** Remembers `key` as missed: a key evicted, or dropped as stale, comes back at its next miss. */
  remember(key: string): void {
    this.add(hashOf(key))
  }

  private add(hash: number): void {
    this.missed.add(hash)
    if (this.missed.size < this.round) return
    // The two Sets swap, the older emptied: no new Set of up to 65,536 hashes each round.
    const oldest = this.missedBefore
    oldest.clear()
    this.missedBefore = this.missed
    this.missed = oldest
    // Fixed for the round as it starts: the entries held may shrink meanwhile (a write dropping many).
    this.round = Math.min(MAX_ROUND, Math.max(MIN_ROUND, this.entries()))
  }
}
