/**
 * When each node last changed, as a sequence number, for "did it change after this point" questions, bounded: once
 * more than `maxNodes` are held, all are forgotten and a floor takes their place (every node counts as changed at the
 * latest of them), so that what was remembered afterwards is answered exactly and what came before conservatively.
 * Held in full, a count flush's nodes piled up for as long as the server ran: at 100,000 nodes some 6.5 MiB of heap
 * once every node had been installed, growing meanwhile.
 */
export class ChangeTimes {
  private readonly at = new Map<string, number>()
  private floor = 0

  constructor(private readonly maxNodes: number) {}

  /** `id` changed at `sequence` (no lower than any given before). */
  set(id: string, sequence: number): void {
    this.at.set(id, sequence)
    if (this.at.size > this.maxNodes) this.forgetAll(sequence)
  }

  /** Every node counts as changed at `sequence` (no lower than any given before). */
  forgetAll(sequence: number): void {
    this.at.clear()
    this.floor = sequence
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
