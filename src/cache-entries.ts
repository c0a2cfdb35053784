/**
 * What the byte-bounded caches share (bounded-cache.ts, text-cache.ts): their entries by key, each with the bytes it
 * holds, the bytes held in all, and whom they let in once nearly full: only a newcomer whose key was missed lately
 * (doorkeeper.ts), or a key held already (a replacement).
 */
import { Doorkeeper } from './doorkeeper'

/** Up to this share of the bytes, every newcomer is kept (no eviction is needed for a typical one). */
const OPEN_SHARE = 7 / 8

export abstract class CacheEntries<E extends { bytes: number }> {
  protected readonly entries = new Map<string, E>()
  protected held = 0
  /** Kept through clear(): it holds no values. */
  private readonly doorkeeper = new Doorkeeper(() => this.entries.size)

  /** The bytes the cache may hold (none: it keeps nothing). */
  protected abstract get bound(): number

  get bytes(): number {
    return this.held
  }

  get size(): number {
    return this.entries.size
  }

  /**
   * Whether a value for `key`, missed now, should be made and kept: always while the cache is less than nearly full;
   * then only when the key was missed (or evicted, or dropped as stale) lately, or is held (a replacement). A cache of
   * no bytes keeps nothing. Remembers the miss.
   */
  admits(key: string): boolean {
    if (this.bound <= 0) return false
    return this.held < this.bound * OPEN_SHARE || this.entries.has(key) || this.doorkeeper.lets(key)
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

  /** Evicts the entry of `key`: asked for again soon, it comes back at its first miss. */
  protected evict(key: string): void {
    this.doorkeeper.remember(key)
    this.remove(key)
  }

  protected remove(key: string): boolean {
    const entry = this.entries.get(key)
    if (!entry) return false
    this.entries.delete(key)
    this.held -= entry.bytes
    return true
  }
}
