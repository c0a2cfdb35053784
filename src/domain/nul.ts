/**
 * NUL (U+0000) in text: SQLite stores it, PostgreSQL refuses it (a 500 on one backend, data that cannot be copied to
 * the other). Refused wherever text comes in (the address, JSON bodies, fixtures, mirrored items), so that both
 * backends hold the same.
 */

/** Whether a parsed JSON value holds a NUL in any string or key: a walk that makes nothing (most values hold none). */
export function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0')
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) {
    for (const item of value) if (holdsNul(item)) return true
    return false
  }
  for (const key in value) if (key.includes('\0') || holdsNul((value as Record<string, unknown>)[key])) return true
  return false
}

/** Where a NUL first stands in a parsed JSON value (`name`, `items.2.id`), or undefined; linear in the value's size. */
export function nulPath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key
    if (key.includes('\0')) return at
    const found = nulPath(item, at)
    if (found !== undefined) return found
  }
  return undefined
}

/** Whether a raw address (path and query, percent-encoded) holds an encoded NUL. */
export const addressHoldsNul = (url: string) => /%00/.test(url)
