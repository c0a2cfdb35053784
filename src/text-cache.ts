/**
 * A cache of texts whose bytes live in one buffer (grown to its bound as it fills, then kept): its texts are written
 * into it as UTF-8, one after the other, around and around, and a text overwritten goes (the oldest out first, as in
 * BoundedCache); a hit is decoded again. Once nearly full it keeps a newcomer only if its key was missed lately
 * (cache-entries.ts).
 *
 * Why not strings in a Map: at 100,000 nodes the node JSON cache takes in and lets go thousands of texts a second,
 * each of which outlived a young collection, so that when it went it was garbage only a full collection frees; and
 * strings in a Map held 1.67 times the bytes the cache counted. Here a text that goes leaves nothing behind but its
 * small entry, and the buffer is the cache's bound, in bytes (each entry's bookkeeping beside it, its key, its place
 * and the number its owner keeps with it, is some 100 bytes). The mix at 100,000 nodes spent 3-19% less server CPU a
 * request; the peak memory did not move (docs/benchmarks.md, "Node texts in one buffer").
 */
import { CacheEntries } from './cache-entries'

interface Place {
  /** Where its bytes begin, counted in all bytes ever written (the buffer's offset is this modulo its size). */
  start: number
  bytes: number
  /** A number the owner keeps with the text (a download count). */
  tag: number
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export class TextCache extends CacheEntries<Place> {
  /**
   * Each text written, in the order written (so by where it begins), from `front` on: the oldest first. One replaced
   * or deleted since is passed over (its place begins elsewhere now, or there is none).
   */
  private orderKeys: string[] = []
  private orderStarts: number[] = []
  private front = 0
  /**
   * Grown as its first lap is written (doubling, from 64 KiB), up to `maxBytes`: a registry that writes fewer bytes
   * than the bound holds only those (texts replaced count until a clear(), as their bytes are not written over
   * before the lap ends). One the system cannot give (a bound of more than the memory there is) stops the growth
   * where it is, and the texts go round what it has.
   */
  private buffer = new Uint8Array(0)
  private growing = true
  /** Bytes written in all, the ends of laps skipped included: the next text begins here (modulo the ring's size). */
  private written = 0
  /** Whole bytes: a fractional bound (half of an odd one) would put texts at fractional places. */
  readonly maxBytes: number

  constructor(maxBytes: number) {
    super()
    this.maxBytes = Math.max(0, Math.floor(maxBytes))
  }

  /** The bytes the ring goes round once it is grown (where its growth stopped, if the system refused more). */
  private get ringBytes(): number {
    return this.growing ? this.maxBytes : this.buffer.length
  }

  protected get bound(): number {
    return this.ringBytes
  }

  /** Bytes its buffer takes now (grown with its first lap). */
  get bufferBytes(): number {
    return this.buffer.length
  }

  get(key: string): string | undefined {
    const place = this.entries.get(key)
    if (!place) return undefined
    const at = place.start % this.ringBytes
    return decoder.decode(this.buffer.subarray(at, at + place.bytes))
  }

  /** The number kept with the text of `key` (undefined when none is held). */
  tag(key: string): number | undefined {
    return this.entries.get(key)?.tag
  }

  /** Sets the number kept with the text of `key`; false when none is held. */
  retag(key: string, tag: number): boolean {
    const place = this.entries.get(key)
    if (place) place.tag = tag
    return place !== undefined
  }

  /**
   * Keeps `text` (with `tag`), the oldest texts evicted for room. Not kept: one larger than the whole buffer, and one
   * with a lone surrogate (UTF-8 has none: it would be written, and read back, as U+FFFD). JSON.stringify makes none.
   */
  set(key: string, text: string, tag = 0): boolean {
    this.remove(key)
    if (!text.isWellFormed()) return false
    const length = Buffer.byteLength(text)
    // A text of no bytes still takes one of the ring, so that texts are never more than its bytes (nor their entries).
    const span = Math.max(length, 1)
    if (span > this.maxBytes) return false // before growing the buffer for it
    if (this.growing && this.written + span > this.buffer.length) this.grow(this.written + span)
    const ring = this.ringBytes
    if (ring === 0 || span > ring) return false
    let at = this.written % ring
    // A text is never split: one that does not fit before the ring's end starts the next lap.
    if (at + span > ring) {
      this.written += ring - at
      at = 0
    }
    // The texts in the bytes about to be written go, the oldest first (texts are written in the order they came, and
    // those written before the lap's skipped end are older still).
    const overwrittenBelow = this.written + span - ring
    while (this.front < this.orderKeys.length && this.orderStarts[this.front]! < overwrittenBelow) {
      const oldest = this.orderKeys[this.front]!
      if (this.entries.get(oldest)?.start === this.orderStarts[this.front]) this.evict(oldest)
      this.front++
    }
    if (this.front > 1024 && this.front * 2 > this.orderKeys.length) {
      this.orderKeys = this.orderKeys.slice(this.front)
      this.orderStarts = this.orderStarts.slice(this.front)
      this.front = 0
    }
    encoder.encodeInto(text, this.buffer.subarray(at, at + length))
    this.entries.set(key, { start: this.written, bytes: length, tag })
    this.orderKeys.push(key)
    this.orderStarts.push(this.written)
    this.written += span
    this.held += length
    return true
  }

  /** During the first lap: room for `needed` bytes (while the bound and the system allow), the texts copied over. */
  private grow(needed: number): void {
    const size = Math.min(this.maxBytes, Math.max(needed, 2 * this.buffer.length, 64 * 1024))
    try {
      const bigger = new Uint8Array(size)
      bigger.set(this.buffer)
      this.buffer = bigger
      this.growing = size < this.maxBytes
    } catch {
      this.growing = false // RangeError: out of memory
    }
  }

  /**
   * Empties the cache (the misses remembered stay); the buffer is kept for the texts to come, written again from its
   * front (so that while it is growing, texts cleared away do not grow it).
   */
  override clear(): void {
    super.clear()
    this.orderKeys = []
    this.orderStarts = []
    this.front = 0
    this.written = 0
  }
}
