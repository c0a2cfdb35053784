/**
 * Substring search over one value per slot: newline-joined texts scanned with indexOf, one text per block of
 * slots, so that a change rebuilds only the block holding the slot it changed (at 100,000 nodes, rebuilding one
 * text for all of them cost every write tens of milliseconds on the next filtered search). The texts are UTF-8
 * bytes: Buffer's indexOf scans them 7x faster than a string's (17 MB of host node names in 1.5 ms, not 10.7 ms)
 * in half the memory of a string holding any character past Latin-1; UTF-8 being self-synchronizing, a byte match
 * of a whole needle is a character match.
 *
 * Each block also keeps which byte trigrams its text holds, as bits of a hash (a quarter to a half of the text's size),
 * and a needle of three bytes or more skips every block missing one of its trigrams. A rare needle then reads a few
 * blocks instead of all of them: at 100,000 nodes a host node search scanned 17 MB (1.5 ms) for a few dozen hits.
 */

const BLOCK = 512
/** Bits of a block's trigram filter: the power of two from two to four per byte of its text, within these bounds. */
const MIN_FILTER_BITS = 1 << 12
const MAX_FILTER_BITS = 1 << 18
const NEWLINE = 0x0a

class Block {
  text = Buffer.alloc(0)
  /** Byte offset of each value in `text`. */
  starts = new Int32Array(0)
  slots = new Int32Array(0)
  /** Bit `trigramBit(...) & mask` is set for each trigram of one value's bytes in `text`. */
  trigrams = new Uint32Array(0)
  mask = 0
  stale = true
}

/** A trigram's bit before masking (a multiplicative hash of its three bytes). */
const trigramBit = (a: number, b: number, c: number) => Math.imul((a << 16) | (b << 8) | c, 0x9e3779b1) >>> 8

/** The trigram bits of a needle (none under three bytes: such a needle is looked for in every block). */
function needleTrigrams(bytes: Uint8Array): number[] {
  const bits: number[] = []
  for (let i = 2; i < bytes.length; i++) bits.push(trigramBit(bytes[i - 2]!, bytes[i - 1]!, bytes[i]!))
  return bits
}

function mayHold(block: Block, bits: readonly number[]): boolean {
  const { trigrams, mask } = block
  for (const bit of bits) {
    const at = bit & mask
    if ((trigrams[at >>> 5]! & (1 << (at & 31))) === 0) return false
  }
  return true
}

export class SubstringIndex {
  private readonly blocks: Block[] = []
  /** Blocks whose text searches have scanned, all told (the trigram filter skips the rest; tests read it). */
  scannedBlocks = 0

  /** `value(slot)` is the lower-cased value of a slot (empty or undefined: none); `size()` bounds the slots. */
  constructor(
    private readonly value: (slot: number) => string | undefined,
    private readonly size: () => number,
  ) {}

  /** The value of `slot` changed (or every value, without a slot). */
  invalidate(slot?: number): void {
    if (slot === undefined) for (const b of this.blocks) b.stale = true
    else if (this.blocks[Math.floor(slot / BLOCK)]) this.blocks[Math.floor(slot / BLOCK)]!.stale = true
  }

  /**
   * Builds stale blocks (at least one) until `deadline` (a performance.now() time): a warm-up does this between its
   * yields, so that the first search does not build them all (100 ms at 100,000 nodes). True when some are left.
   */
  rebuildStale(deadline: number): boolean {
    const count = this.blockCount()
    let built = false
    for (let b = 0; b < count; b++) {
      const block = this.blocks[b]!
      if (!block.stale) continue
      if (built && performance.now() >= deadline) return true
      this.rebuild(block, b * BLOCK)
      built = true
    }
    return false
  }

  /** Slots whose value contains `needle` (lower-cased already), each once, in slot order. */
  search(needle: string): number[] {
    const found: number[] = []
    if (!needle || needle.includes('\n')) return found
    const bytes = Buffer.from(needle)
    const bits = needleTrigrams(bytes)
    const count = this.blockCount()
    for (let b = 0; b < count; b++) {
      const block = this.blocks[b]!
      if (block.stale) this.rebuild(block, b * BLOCK)
      if (!mayHold(block, bits)) continue
      this.scannedBlocks++
      const { text, starts, slots } = block
      for (let at = text.indexOf(bytes); at !== -1;) {
        const i = locate(starts, at)
        found.push(slots[i]!)
        const next = i + 1 < starts.length ? starts[i + 1]! : text.length
        at = text.indexOf(bytes, next)
      }
    }
    return found
  }

  private blockCount(): number {
    const count = Math.ceil(this.size() / BLOCK)
    while (this.blocks.length < count) this.blocks.push(new Block())
    return count
  }

  private rebuild(block: Block, first: number) {
    const parts: string[] = []
    const starts: number[] = []
    const slots: number[] = []
    let length = 0
    const end = Math.min(first + BLOCK, this.size())
    for (let slot = first; slot < end; slot++) {
      const value = this.value(slot)
      if (!value) continue
      starts.push(length)
      slots.push(slot)
      parts.push(value)
      length += Buffer.byteLength(value) + 1
    }
    block.text = Buffer.from(parts.join('\n'))
    block.starts = Int32Array.from(starts)
    block.slots = Int32Array.from(slots)
    indexTrigrams(block)
    block.stale = false
  }
}

function indexTrigrams(block: Block) {
  const { text } = block
  let size = MIN_FILTER_BITS
  while (size < text.length * 2 && size < MAX_FILTER_BITS) size *= 2
  const trigrams = new Uint32Array(size / 32)
  const mask = size - 1
  for (let i = 2; i < text.length; i++) {
    const a = text[i - 2]!
    const b = text[i - 1]!
    const c = text[i]!
    if (a === NEWLINE || b === NEWLINE || c === NEWLINE) continue // spans two values
    const at = trigramBit(a, b, c) & mask
    trigrams[at >>> 5]! |= 1 << (at & 31)
  }
  block.trigrams = trigrams
  block.mask = mask
}

/** The index of the value whose text range holds position `at`. */
function locate(starts: Int32Array, at: number): number {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (starts[mid]! <= at) lo = mid
    else hi = mid - 1
  }
  return lo
}
