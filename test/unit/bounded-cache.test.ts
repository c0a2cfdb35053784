/** The byte-bounded cache under every cache of the registry: oldest out first, and once full a doorkeeper. */
import { expect, test } from 'bun:test'
import { BoundedCache } from '../../src/bounded-cache'

/** Keys as the cache holds them now, oldest first. */
const held = (cache: BoundedCache<string>, keys: string[]) => keys.filter((k) => cache.get(k) !== undefined)

test('holds at most its bytes, the oldest going first; one larger than the bound is not kept', () => {
  const cache = new BoundedCache<string>(300)
  for (const k of ['a', 'b', 'c']) expect(cache.set(k, k, 100)).toBe(true)
  expect(cache.bytes).toBe(300)
  expect(cache.set('d', 'd', 150)).toBe(true) // room for it: a and b go
  expect(held(cache, ['a', 'b', 'c', 'd'])).toEqual(['c', 'd'])
  expect(cache.bytes).toBe(250)
  expect(cache.set('huge', 'huge', 301)).toBe(false)
  expect(cache.bytes).toBe(250)
  // Replacing a key counts only its new size.
  cache.set('c', 'c2', 10)
  expect(cache.bytes).toBe(160)
  expect(cache.get('c')).toBe('c2')
})

test('lets everything in until it first evicts; then only keys missed before lately', () => {
  const cache = new BoundedCache<string>(300)
  for (const k of ['a', 'b', 'c']) {
    expect(cache.admits(k)).toBe(true)
    cache.set(k, k, 100)
  }
  // Still no eviction: the fourth is let in, and evicts.
  expect(cache.admits('d')).toBe(true)
  cache.set('d', 'd', 100)
  expect(held(cache, ['a', 'b', 'c', 'd'])).toEqual(['b', 'c', 'd'])
  // Full now: a key missed for the first time stays out; missed again, it comes in.
  expect(cache.admits('e')).toBe(false)
  expect(cache.admits('f')).toBe(false)
  expect(cache.admits('e')).toBe(true)
  cache.set('e', 'e', 100)
  expect(held(cache, ['b', 'c', 'd', 'e'])).toEqual(['c', 'd', 'e'])
  expect(cache.admits('c')).toBe(true) // held: a replacement takes no more room
  // Emptied, it lets everything in again.
  cache.clear()
  expect(cache.bytes).toBe(0)
  expect(cache.admits('g')).toBe(true)
})

test('forgets a missed key after two rounds of as many misses as it holds entries (256 at least)', () => {
  const cache = new BoundedCache<string>(100)
  cache.set('x', 'x', 100)
  cache.set('y', 'y', 100) // full
  expect(cache.admits('once')).toBe(false)
  for (let i = 0; i < 256; i++) cache.admits(`other-${i}`)
  expect(cache.admits('once')).toBe(true) // within the round before
  expect(cache.admits('twice')).toBe(false)
  for (let i = 0; i < 2 * 256; i++) cache.admits(`more-${i}`)
  expect(cache.admits('twice')).toBe(false) // two rounds ago: forgotten
})

test('a stale entry dropped by its owner is let in at its next miss', () => {
  const cache = new BoundedCache<string>(200)
  for (const k of ['a', 'b', 'c']) cache.set(k, k, 100) // evicted a: full
  expect(cache.delete('c')).toBe(true)
  expect(cache.delete('c')).toBe(false)
  expect(cache.bytes).toBe(100)
  expect(cache.admits('c')).toBe(true)
  expect(cache.admits('never-held')).toBe(false)
})

test('grow counts more bytes for an entry, evicting others, and fails for an entry evicted meanwhile', () => {
  const cache = new BoundedCache<string>(300)
  for (const k of ['a', 'b', 'c']) cache.set(k, k, 100)
  expect(cache.grow('c', 100)).toBe(true) // a goes
  expect(held(cache, ['a', 'b', 'c'])).toEqual(['b', 'c'])
  expect(cache.bytes).toBe(300)
  expect(cache.grow('b', 100)).toBe(false) // b was the oldest: evicted to make the room
  expect(cache.get('b')).toBeUndefined()
  expect(cache.bytes).toBe(200)
  expect(cache.grow('gone', 1)).toBe(false)
})
