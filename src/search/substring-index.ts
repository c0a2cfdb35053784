/** Substring search over one value per slot: a single newline-joined text scanned with indexOf. */

export class SubstringIndex {
  private text = ''
  private starts = new Int32Array(0)
  private slots = new Int32Array(0)
  private stale = true

  /** `values` yields every (slot, lower-cased value) pair; read again on the next search after invalidate(). */
  constructor(private readonly values: () => Iterable<[number, string]>) {}

  invalidate(): void {
    this.stale = true
  }

  /** Slots whose value contains `needle` (lower-cased already), each once. */
  search(needle: string): number[] {
    if (this.stale) this.rebuild()
    const found: number[] = []
    if (!needle || needle.includes('\n')) return found
    for (let at = this.text.indexOf(needle); at !== -1;) {
      const i = this.locate(at)
      found.push(this.slots[i]!)
      const next = i + 1 < this.starts.length ? this.starts[i + 1]! : this.text.length
      at = this.text.indexOf(needle, next)
    }
    return found
  }

  private rebuild() {
    const parts: string[] = []
    const starts: number[] = []
    const slots: number[] = []
    let length = 0
    for (const [slot, value] of this.values()) {
      if (!value) continue
      starts.push(length)
      slots.push(slot)
      parts.push(value)
      length += value.length + 1
    }
    this.text = parts.join('\n')
    this.starts = Int32Array.from(starts)
    this.slots = Int32Array.from(slots)
    this.stale = false
  }

  /** The index of the value whose text range holds position `at`. */
  private locate(at: number): number {
    let lo = 0
    let hi = this.starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (this.starts[mid]! <= at) lo = mid
      else hi = mid - 1
    }
    return lo
  }
}
