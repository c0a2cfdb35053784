/** A fixed-window counter per key (client address, user), held in memory. */

/** Admits one event for `key`: 0 when admitted, else the milliseconds until the key's window resets. */
export type RateLimiter = (key: string, nowMs: number) => number

export function createRateLimiter(limit: number, windowMs: number): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>()
  return (key, nowMs) => {
    const w = windows.get(key)
    if (!w || nowMs - w.start >= windowMs) {
      if (windows.size > 10_000) windows.clear()
      windows.set(key, { start: nowMs, count: 1 })
      return 0
    }
    return ++w.count <= limit ? 0 : w.start + windowMs - nowMs
  }
}
