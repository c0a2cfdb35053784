/**
 * When each node last changed, as a sequence number, for "did it change after this point" questions, bounded: once
 * more than `maxNodes` are held, the older half are forgotten behind a floor (each counts as changed at the newest
 * of them), so that answers about what came after the floor are exact and those about before it conservative (a
 * change). Held in full, a count flush's nodes piled up for as long as the server ran: at 100,000 nodes some 6.5 MiB
 * of heap once every node had been installed, growing meanwhile.
 */
export class ChangeTimes {
  /** Oldest change first (a node changing again goes to the end), so that the older half is the Map's first half. */
  private readonly at = new Map<string, number>()
  private floor = 0

  constructor(private readonly maxNodes: number) {}

  /** `id` changed at `sequence` (no lower than any given before). */
  set(id: string, sequence: number): void {
    this.at.delete(id)
    this.at.set(id, sequence)
    if (this.at.size <= this.maxNodes) return
    let forget = this.at.size - (this.maxNodes >> 1)
    for (const [key, at] of this.at) {
      if (forget-- <= 0) break
      this.floor = Math.max(this.floor, at)
      this.at.delete(key)
    }
  }

  /** Every node counts as changed at `sequence`. */
  forgetAll(sequence: number): void {
    this.at.clear()
    this.floor = Math.max(this.floor, sequence)
  }

  /** Whether `id` may have changed after `since`. */
  after(id: string, since: number): boolean {
    return Math.max(this.floor, this.at.get(id) ?? 0) > since
  }

  /** Whether every node may have changed after `since` (the floor is past it). */
  allAfter(since: number): boolean {
    return this.floor > since
  }

  /** Nodes held (for tests). */
  get size(): number {
    return this.at.size
  }
}
