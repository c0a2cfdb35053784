/**
 * The change-feed serials this process committed itself (per store handle): a process following its store's
 * feed for other processes' writes skips these, already applied when they were made. Without it every write was
 * applied twice, and a download-count flush, re-read as a full change of its nodes, dropped their rendered JSON.
 */
const ranges = new WeakMap<object, { first: number; last: number }[]>()

export const ownSerials = {
  record(db: object, range: { first: number; last: number }): void {
    let list = ranges.get(db)
    if (!list) ranges.set(db, (list = []))
    list.push(range)
  },
  /** The stretches of serials in (after, through] outside this process's ranges, oldest first, as (after, through] pairs. */
  othersBetween(db: object, after: number, through: number): [after: number, through: number][] {
    const gaps: [number, number][] = []
    let from = after
    for (const r of [...(ranges.get(db) ?? [])].sort((x, y) => x.first - y.first)) {
      if (r.last <= from) continue
      if (r.first > through) break
      if (r.first - 1 > from) gaps.push([from, r.first - 1])
      from = r.last
    }
    if (from < through) gaps.push([from, through])
    return gaps
  },
  /** Forgets the ranges wholly at or before `serial` (the follower has read that far). */
  forgetThrough(db: object, serial: number): void {
    const list = ranges.get(db)
    if (list)
      ranges.set(
        db,
        list.filter((r) => r.last > serial),
      )
  },
}
