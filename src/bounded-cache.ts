/**
 * A cache bounded by bytes (each entry's size given by its owner), the oldest entries out first, that keeps a
 * newcomer, once it is nearly full, only if its key was missed lately (cache-entries.ts).
 *
 * Without it, every miss of a large catalogue's long tail pushed an entry out for one that was rarely asked for
 * again: at 100,000 nodes the node JSON, list response and query caches turned over thousands of entries a second,
 * whose garbage the collector let pile up to 250 MiB above the live heap. A key asked for twice within about as
 * many misses as the cache holds entries is kept as before; so is everything while the cache has room.
 */
import { CacheEntries } from './cache-entries'
import { oldestFirst } from './oldest-first'

interface Held<V> {
  value: V
  bytes: number
}

export class BoundedCache<V> extends CacheEntries<Held<V>> {
  private readonly nextOldest = oldestFirst(this.entries)

  constructor(readonly maxBytes: number) {
    super()
  }

  protected get bound(): number {
    return this.maxBytes
  }

  get(key: string): V | undefined {
    return this.entries.get(key)?.value
  }

  /** Keeps `value` as `bytes`, the oldest entries evicted for room; one larger than the whole bound is not kept. */
  set(key: string, value: V, bytes: number): boolean {
    this.remove(key)
    if (bytes > this.maxBytes) return false
    while (this.held + bytes > this.maxBytes) {
      const oldest = this.nextOldest()
      if (oldest === undefined) break
      this.evict(oldest)
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
}
