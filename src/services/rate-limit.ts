/**
 * Fixed-window counters per key (client address, user): in memory for one process, or in the database for several
 * instances serving one registry (a limit per instance would multiply by their number).
 */
import type { Store } from '../store/db'
import { countRateEvent } from '../store/shared-state'

/** Admits one event for `key`: 0 when admitted, else the milliseconds until the key's window resets. */
export type RateLimiter = (key: string, nowMs: number) => number | Promise<number>

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

/** The same counters in the store's rate_limits table, under `name:` so that limiters share the table, not their keys. */
export function createSharedRateLimiter(db: Store, name: string, limit: number, windowMs: number): RateLimiter {
  return async (key, nowMs) => {
    const iso = (ms: number) => new Date(ms).toISOString()
    const row = await countRateEvent(db, `${name}:${key}`, iso(nowMs), iso(nowMs - windowMs))
    return row.count <= limit ? 0 : Math.max(1, Date.parse(row.window_started_at) + windowMs - nowMs)
  }
}
