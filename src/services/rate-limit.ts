/** A fixed-window counter per key (client address), held in memory. */

export type RateLimiter = (key: string, nowMs: number) => boolean

export function createRateLimiter(limit: number, windowMs: number): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>()
  return (key, nowMs) => {
    const w = windows.get(key)
    if (!w || nowMs - w.start >= windowMs) {
      if (windows.size > 10_000) windows.clear()
      windows.set(key, { start: nowMs, count: 1 })
      return true
    }
    return ++w.count <= limit
  }
}
