/**
 * A cache bounded by bytes (each entry's size given by its owner), the oldest entries out first, that keeps a
 * newcomer, once it is nearly full, only if its key was missed lately (doorkeeper.ts).
 *
 * Without it, every miss of a large catalogue's long tail pushed an entry out for one that was rarely asked for
 * again: at 100,000 nodes the node JSON, list response and query caches turned over thousands of entries a second,
 * whose garbage the collector let pile up to 250 MiB above the live heap. A key asked for twice within about as
 * many misses as the cache holds entries is kept as before; so is everything while the cache has room.
 */
import { Doorkeeper } from './doorkeeper'
import { oldestFirst } from './oldest-first'

interface Held<V> {
  value: V
  bytes: number
}

/** Up to this share of the bytes, every newcomer is kept (no eviction is needed for a typical one). */
export const OPEN_SHARE = 7 / 8

export class BoundedCache<V> {
  private readonly entries = new Map<string, Held<V>>()
  private readonly nextOldest = oldestFirst(this.entries)
  private held = 0
  /** Kept through clear(): it holds no values. */
  private readonly doorkeeper = new Doorkeeper(() => this.entries.size)

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
   * Whether a value for `key`, missed now, should be made and kept: always while the cache is less than nearly full;
   * then only when the key was missed (or evicted, or dropped as stale) lately, or is held (a replacement). A cache of
   * no bytes keeps nothing. Remembers the miss.
   */
  admits(key: string): boolean {
    if (this.maxBytes <= 0) return false
    return this.held < this.maxBytes * OPEN_SHARE || this.entries.has(key) || this.doorkeeper.lets(key)
  }

  /** Keeps `value` as `bytes`, the oldest entries evicted for room; one larger than the whole bound is not kept. */
  set(key: string, value: V, bytes: number): boolean {
    this.remove(key)
    if (bytes > this.maxBytes) return false
    while (this.held + bytes > this.maxBytes) {
      const oldest = this.nextOldest()
      if (oldest === undefined) break
      // Asked for again soon, it comes back at its first miss.
      this.doorkeeper.remember(oldest)
      this.remove(oldest)
    }
    this.entries.set(key, { value, bytes })
    this.held += bytes
    return true
  }

  /**
   * Counts `bytes` more for the entry of `key` (a value that grew), now the newest, evicting older ones for room;
   * false, with the entry left as it was, when it is not held or would not fit at its new size.
   */
  grow(key: string, bytes: number): boolean {
    const entry = this.entries.get(key)
    if (!entry || entry.bytes + bytes > this.maxBytes) return false
    return this.set(key, entry.value, entry.bytes + bytes)
  }

  /** Drops the entry of `key` (its value went stale): its next miss is let in, as it had been asked for. */
  delete(key: string): boolean {
    if (!this.remove(key)) return false
    this.doorkeeper.remember(key)
    return true
  }

  /** Empties the cache (the misses remembered stay: they hold no values). */
  clear(): void {
    this.entries.clear()
    this.held = 0
  }

  private remove(key: string): boolean {
    const entry = this.entries.get(key)
    if (!entry) return false
    this.entries.delete(key)
    this.held -= entry.bytes
    return true
  }
}
