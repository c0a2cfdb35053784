/**
 * NUL (U+0000) in text: SQLite stores it, PostgreSQL refuses it (a 500 on one backend, data that cannot be copied to
 * the other). Refused wherever text comes in (the address, JSON bodies, fixtures, mirrored items), so that both
 * backends hold the same.
 */

/**
 * Whether a parsed JSON value holds a NUL in any string or key: the quick walk every mirrored item gets, keeping
 * nothing but the values still to look at, and without recursion (see nulPath).
 */
export function holdsNul(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length) {
    const item = stack.pop()
    if (typeof item === 'string') {
      if (item.includes('\0')) return true
    } else if (Array.isArray(item)) {
      for (const child of item) stack.push(child)
    } else if (typeof item === 'object' && item !== null) {
      for (const key in item) {
        if (key.includes('\0')) return true
        stack.push((item as Record<string, unknown>)[key])
      }
    }
  }
  return false
}

/** Stands on the walk's stack for a key that holds a NUL, so that it is found in document order. */
const NUL_KEY = Symbol('nul-key')

/**
 * Where a NUL first stands in a parsed JSON value (`name`, `items.2.id`), or undefined. Linear in the value's size
 * and without recursion: a value nested 100,000 levels deep is walked, not a stack overflow. Each key visited is
 * kept with its parent's place, and only the path found is spelt out.
 */
export function nulPath(value: unknown): string | undefined {
  const keys: string[] = []
  const parents: number[] = []
  const stack: [item: unknown, at: number][] = [[value, -1]]
  while (stack.length) {
    const [item, at] = stack.pop()!
    if (item === NUL_KEY || (typeof item === 'string' && item.includes('\0'))) return pathTo(keys, parents, at)
    if (typeof item !== 'object' || item === null) continue
    const own = Object.keys(item)
    // Last to first, so that the first key is walked first.
    for (let i = own.length - 1; i >= 0; i--) {
      const key = own[i]!
      keys.push(key)
      parents.push(at)
      stack.push([key.includes('\0') ? NUL_KEY : (item as Record<string, unknown>)[key], keys.length - 1])
    }
  }
  return undefined
}

function pathTo(keys: readonly string[], parents: readonly number[], at: number): string {
  const path: string[] = []
  for (let i = at; i !== -1; i = parents[i]!) path.push(keys[i]!)
  return path.reverse().join('.')
}

/** Whether a raw address (path and query, percent-encoded) holds an encoded NUL. */
export const addressHoldsNul = (url: string) => /%00/.test(url)
