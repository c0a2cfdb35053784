/**
 * The count of versions across nodes per question (statuses, banned nodes shown), remembered: counting a million index
 * entries took 85-160 ms of the event loop. A count is exact until the store's next change (the feed's serial moves
 * with every write, a second's download counts included, so an anonymous install made the next page count again). A
 * count past `exactBelow` (the deepest versions across nodes can be paged to) is kept for `keepMs` whatever is written
 * meanwhile: no page reaches its end, and one count a question per `keepMs` bounds what installs and pages alternated
 * can make the server do.
 */
export interface VersionTotalsOptions {
  exactBelow: number
  keepMs: number
  now?: () => number
}

interface Remembered {
  serial: number
  total: number
  at: number
}

export class VersionTotals {
  private readonly known = new Map<string, Remembered>()
  private readonly now: () => number

  constructor(private readonly opts: VersionTotalsOptions) {
    this.now = opts.now ?? Date.now
  }

  /** The total for `key` at the store's `serial`, from memory or from `count` (then remembered). */
  async get(key: string, serial: number, count: () => Promise<number>): Promise<number> {
    const hit = this.known.get(key)
    if (hit && (hit.serial === serial || (hit.total >= this.opts.exactBelow && this.now() - hit.at < this.opts.keepMs))) return hit.total
    const at = this.now()
    const total = await count()
    this.known.set(key, { serial, total, at })
    return total
  }
}
