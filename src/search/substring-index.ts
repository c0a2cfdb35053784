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
 * A block's text begins and ends with a newline, so that a whole line (a value may hold several, one per line) is
 * found as `\n` + line + `\n`; such a search reads only the blocks whose filter of whole lines (four bits of a hash
 * of each, 32 to 64 bits a line) holds it. Through trigrams alone a common word (`image`) read most blocks: 290 µs.
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
  /** Bits `lineBit(hash of a line, 0..3)` are set for each line of each value in `text`. */
  lines = new Uint32Array(0)
  lineMask = 0
  /** Values set since the block was built, by slot (undefined: none); the block is rebuilt before it is read. */
  pending: Map<number, string | undefined> | undefined
}

/** A trigram's bit before masking (a multiplicative hash of its three bytes). */
const trigramBit = (a: number, b: number, c: number) => Math.imul((a << 16) | (b << 8) | c, 0x9e3779b1) >>> 8

/** The trigram bits of a needle (none under three bytes: such a needle is looked for in every block). */
function needleTrigrams(bytes: Uint8Array): number[] {
  const bits: number[] = []
  for (let i = 2; i < bytes.length; i++) bits.push(trigramBit(bytes[i - 2]!, bytes[i - 1]!, bytes[i]!))
  return bits
}

/** Whether a block may hold `needle`: each of its trigrams is among the block's (always, under three bytes). */
function trigramsOf(needle: Uint8Array): (block: Block) => boolean {
  const bits = needleTrigrams(needle)
  return ({ trigrams, mask }) => {
    for (const bit of bits) {
      const at = bit & mask
      if ((trigrams[at >>> 5]! & (1 << (at & 31))) === 0) return false
    }
    return true
  }
}

/** Bits of a line's hash a block's filter sets: four, by double hashing (one in some 8,000 absent lines passes). */
const LINE_BITS = 4

function lineBit(hash: number, i: number, mask: number): number {
  const step = (Math.imul(hash, 0x9e3779b1) ^ (hash >>> 15)) | 1
  return (hash + Math.imul(i, step)) & mask
}

/** Whether a block may hold a line of this hash: each of its bits is set. */
function holdsLine({ lines, lineMask }: Block, hash: number): boolean {
  for (let i = 0; i < LINE_BITS; i++) {
    const at = lineBit(hash, i, lineMask)
    if ((lines[at >>> 5]! & (1 << (at & 31))) === 0) return false
  }
  return true
}

/**
 * The values are the index's own: kept only in the blocks' texts (and, until their block is rebuilt, among its
 * pending ones), not also as strings beside them (the host node names of 100,000 nodes were 18 MB of strings).
 */
export class SubstringIndex {
  private readonly blocks: Block[] = []
  /** Blocks whose text searches have scanned, all told (the trigram filter skips the rest; tests read it). */
  scannedBlocks = 0
  /** Blocks built, all told (tests read it). */
  builtBlocks = 0

  /** Sets the lower-cased value of `slot` (empty or undefined: none); its block is rebuilt when next read. */
  set(slot: number, value: string | undefined): void {
    const at = Math.floor(slot / BLOCK)
    while (this.blocks.length <= at) this.blocks.push(new Block())
    const block = this.blocks[at]!
    ;(block.pending ??= new Map()).set(slot, value)
  }

  /**
   * Builds stale blocks (at least one) until `deadline` (a performance.now() time): a warm-up does this between its
   * yields, so that the first search does not build them all (100 ms at 100,000 nodes). True when some are left.
   */
  rebuildStale(deadline: number): boolean {
    let built = false
    for (let b = 0; b < this.blocks.length; b++) {
      const block = this.blocks[b]!
      if (!block.pending) continue
      if (built && performance.now() >= deadline) return true
      this.rebuild(block, b * BLOCK)
      built = true
    }
    return false
  }

  /** Slots whose value contains `needle` (lower-cased already), each once, in slot order. */
  search(needle: string): number[] {
    if (!needle || needle.includes('\n')) return []
    return this.find(Buffer.from(needle), 0)
  }

  /** Slots one of whose value's lines is exactly `line` (lower-cased already), each once, in slot order. */
  slotsWithLine(line: string): number[] {
    if (!line || line.includes('\n')) return []
    // The match begins at the newline before the line: the line itself is one byte on.
    const hash = Bun.hash.xxHash32(line)
    return this.find(Buffer.from(`\n${line}\n`), 1, (block) => holdsLine(block, hash))
  }

  /** Slots whose value holds `bytes`, located by the byte `shift` after the match's start. */
  private find(bytes: Buffer, shift: number, mayHold: (block: Block) => boolean = trigramsOf(bytes)): number[] {
    const found: number[] = []
    for (let b = 0; b < this.blocks.length; b++) {
      const block = this.blocks[b]!
      if (block.pending) this.rebuild(block, b * BLOCK)
      if (!mayHold(block)) continue
      this.scannedBlocks++
      const { text, starts, slots } = block
      for (let at = text.indexOf(bytes); at !== -1;) {
        const i = locate(starts, at + shift)
        found.push(slots[i]!)
        // On from the newline ending this value (the next value's lines begin after it).
        const next = i + 1 < starts.length ? starts[i + 1]! - 1 : text.length
        at = text.indexOf(bytes, next)
      }
    }
    return found
  }

  /** The block's text again, from its values as built and those set since. */
  private rebuild(block: Block, first: number) {
    const pending = block.pending ?? new Map<number, string | undefined>()
    const parts: string[] = []
    const starts: number[] = []
    const slots: number[] = []
    let length = 1 // the newline the text begins with
    let held = 0 // the next of the values as built
    for (let slot = first; slot < first + BLOCK; slot++) {
      while (held < block.slots.length && block.slots[held]! < slot) held++
      const value = pending.has(slot) ? pending.get(slot) : block.slots[held] === slot ? builtValue(block, held) : undefined
      if (!value) continue
      starts.push(length)
      slots.push(slot)
      parts.push(value)
      length += Buffer.byteLength(value) + 1
    }
    block.text = Buffer.from(`\n${parts.join('\n')}\n`)
    block.starts = Int32Array.from(starts)
    block.slots = Int32Array.from(slots)
    indexTrigrams(block)
    indexLines(block, parts)
    block.pending = undefined
    this.builtBlocks++
  }
}

/** The value at index `i` of a block as built (between the newline before it and the one after). */
function builtValue(block: Block, i: number): string {
  const end = i + 1 < block.starts.length ? block.starts[i + 1]! - 1 : block.text.length - 1
  return block.text.toString('utf8', block.starts[i]!, end)
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
    if (a === NEWLINE || b === NEWLINE || c === NEWLINE) continue // spans two lines
    const at = trigramBit(a, b, c) & mask
    trigrams[at >>> 5]! |= 1 << (at & 31)
  }
  block.trigrams = trigrams
  block.mask = mask
}

/** Bits of a block's line filter: the power of two from 32 to 64 per line, within these bounds. */
const MIN_LINE_FILTER_BITS = 1 << 10
const MAX_LINE_FILTER_BITS = 1 << 18

function indexLines(block: Block, values: readonly string[]) {
  const lines = values.flatMap((v) => v.split('\n'))
  let size = MIN_LINE_FILTER_BITS
  while (size < lines.length * 32 && size < MAX_LINE_FILTER_BITS) size *= 2
  const bits = new Uint32Array(size / 32)
  const mask = size - 1
  for (const line of lines) {
    const hash = Bun.hash.xxHash32(line)
    for (let i = 0; i < LINE_BITS; i++) {
      const at = lineBit(hash, i, mask)
      bits[at >>> 5]! |= 1 << (at & 31)
    }
  }
  block.lines = bits
  block.lineMask = mask
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
