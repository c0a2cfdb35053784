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
  has(db: object, serial: number): boolean {
    return ranges.get(db)?.some((r) => serial >= r.first && serial <= r.last) ?? false
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
