/**
 * A cache bounded by bytes (each entry's size given by its owner), the oldest entries out first, that keeps a
 * newcomer, once it has had to evict, only if its key was missed before lately (a "doorkeeper", as in TinyLFU).
 *
 * Without it, every miss of a large catalogue's long tail pushed an entry out for one that was rarely asked for
 * again: at 100,000 nodes the node JSON, list response and query caches turned over thousands of entries a second,
 * whose garbage the collector let pile up to 250 MiB above the live heap. A key asked for twice within about as
 * many misses as the cache holds entries is kept as before; so is everything while the cache has room.
 */
import { oldestFirst } from './oldest-first'

interface Held<V> {
  value: V
  bytes: number
}

/** Keys missed lately, remembered for at least this many misses even in a cache of a few entries. */
const MIN_REMEMBERED = 256

export class BoundedCache<V> {
  private readonly entries = new Map<string, Held<V>>()
  private readonly nextOldest = oldestFirst(this.entries)
  private held = 0
  /** Whether room was made by evicting since the cache was last emptied: newcomers then pass the doorkeeper. */
  private full = false
  /** Keys missed lately: the current round, and the one before (a round ends after as many keys as are held). */
  private missed = new Set<string>()
  private missedBefore = new Set<string>()

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.held
  }

  get size(): number {
    return this.entries.size
  }

  get(key: string): V | undefined {
    return this.entries.get(key)?.value
  }

  /**
   * Whether a value for `key`, missed now, should be made and kept: always while the cache has never had to evict
   * since it was last emptied; after that, only when the key was missed before lately (or is held: a replacement).
   * Remembers the miss.
   */
  admits(key: string): boolean {
    if (!this.full || this.entries.has(key) || this.missed.has(key) || this.missedBefore.has(key)) return true
    this.remember(key)
    return false
  }

  /** Keeps `value` as `bytes`, the oldest entries evicted for room; one larger than the whole bound is not kept. */
  set(key: string, value: V, bytes: number): boolean {
    this.remove(key)
    if (bytes > this.maxBytes || !this.makeRoom(bytes)) return false
    this.entries.set(key, { value, bytes })
    this.held += bytes
    return true
  }

  /** Counts `bytes` more for the entry of `key` (a value that grew), evicting others for room; false if it is gone. */
  grow(key: string, bytes: number): boolean {
    const entry = this.entries.get(key)
    if (!entry || !this.makeRoom(bytes) || this.entries.get(key) !== entry) return false
    entry.bytes += bytes
    this.held += bytes
    return true
  }

  /** Drops the entry of `key` (its value went stale): its next miss is let in, as it had been asked for. */
  delete(key: string): boolean {
    if (!this.remove(key)) return false
    if (this.full) this.remember(key)
    return true
  }

  /** Empties the cache; newcomers are kept freely again until it next has to evict. */
  clear(): void {
    this.entries.clear()
    this.held = 0
    this.full = false
    this.missed.clear()
    this.missedBefore.clear()
  }

  private makeRoom(bytes: number): boolean {
    while (this.held + bytes > this.maxBytes) {
      const oldest = this.nextOldest()
      if (oldest === undefined) return false
      this.full = true
      this.remove(oldest)
    }
    return true
  }

  private remove(key: string): boolean {
    const entry = this.entries.get(key)
    if (!entry) return false
    this.entries.delete(key)
    this.held -= entry.bytes
    return true
  }

  private remember(key: string): void {
    this.missed.add(key)
    if (this.missed.size >= Math.max(MIN_REMEMBERED, this.entries.size)) {
      this.missedBefore = this.missed
      this.missed = new Set()
    }
  }
}
