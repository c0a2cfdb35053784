/** The byte-bounded cache under every cache of the registry: oldest out first, and once nearly full a doorkeeper. */
import { expect, test } from 'bun:test'
import { BoundedCache } from '../../src/bounded-cache'

/** Keys as the cache holds them now, in the order given. */
const held = (cache: BoundedCache<string>, keys: string[]) => keys.filter((k) => cache.get(k) !== undefined)

/** A cache of `n` entries of `size` bytes each, keyed k0, k1, ... (oldest first), filled to its bound. */
function filled(n: number, size = 1) {
  const cache = new BoundedCache<string>(n * size)
  for (let i = 0; i < n; i++) cache.set(`k${i}`, `k${i}`, size)
  return cache
}

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

test('lets everything in below seven eighths of its bytes; then only keys missed lately, or held', () => {
  const cache = new BoundedCache<string>(800)
  for (let i = 0; i < 7; i++) {
    expect(cache.admits(`k${i}`)).toBe(true)
    cache.set(`k${i}`, 'v', 100)
  }
  // 700 of 800 bytes: a key missed for the first time stays out; missed again, it comes in.
  expect(cache.admits('new')).toBe(false)
  expect(cache.admits('other')).toBe(false)
  expect(cache.admits('new')).toBe(true)
  expect(cache.admits('k3')).toBe(true) // held: a replacement takes no more room
  // Emptied (or emptied by a write dropping its entries), it lets everything in again.
  cache.clear()
  expect(cache.admits('fresh')).toBe(true)
  const dropped = filled(300)
  for (let i = 0; i < 300; i++) dropped.delete(`k${i}`)
  expect(dropped.bytes).toBe(0)
  expect(dropped.admits('fresh')).toBe(true)
})

test('a key evicted, or dropped as stale by its owner, is let in at its next miss', () => {
  const cache = filled(4, 100)
  cache.set('k4', 'k4', 100) // k0 evicted
  expect(cache.admits('k0')).toBe(true)
  expect(cache.delete('k2')).toBe(true)
  expect(cache.delete('k2')).toBe(false)
  cache.set('k5', 'k5', 100) // back to its bound
  expect(cache.admits('k2')).toBe(true)
  expect(cache.admits('never-held')).toBe(false)
})

test('remembers a miss for two rounds, each as long as the cache held entries when it began (256 at least)', () => {
  const small = filled(2)
  expect(small.admits('once')).toBe(false)
  for (let i = 0; i < 256; i++) small.admits(`other-${i}`)
  expect(small.admits('once')).toBe(true) // within the round before
  expect(small.admits('twice')).toBe(false)
  for (let i = 0; i < 2 * 256; i++) small.admits(`more-${i}`)
  expect(small.admits('twice')).toBe(false) // two rounds ago: forgotten

  const large = filled(300)
  for (let i = 0; i < 256; i++) large.admits(`first-round-${i}`) // the next rounds are 300 long
  expect(large.admits('kept')).toBe(false)
  for (let i = 0; i < 550; i++) large.admits(`miss-${i}`)
  expect(large.admits('kept')).toBe(true)
})

test('grow counts more bytes for an entry, now the newest, evicting older ones but never itself', () => {
  const cache = filled(3, 100)
  expect(cache.grow('k0', 100)).toBe(true) // k0 was the oldest: k1 goes, k0 stays
  expect(held(cache, ['k0', 'k1', 'k2'])).toEqual(['k0', 'k2'])
  expect(cache.bytes).toBe(300)
  cache.set('k3', 'k3', 100) // the oldest is now k2
  expect(held(cache, ['k0', 'k2', 'k3'])).toEqual(['k0', 'k3'])
  // Too large at its new size: left as it was.
  expect(cache.grow('k3', 201)).toBe(false)
  expect(cache.get('k3')).toBe('k3')
  expect(cache.bytes).toBe(300)
  expect(cache.grow('gone', 1)).toBe(false)
})

test('the share where all come in is seven eighths exactly, and clear() keeps the misses remembered', () => {
  const edge = new BoundedCache<string>(800)
  edge.set('a', 'a', 699)
  expect(edge.admits('x')).toBe(true)
  edge.set('b', 'b', 1)
  expect(edge.admits('y')).toBe(false)
  const kept = filled(4, 100)
  expect(kept.admits('before')).toBe(false)
  kept.clear()
  for (let i = 0; i < 4; i++) kept.set(`r${i}`, 'v', 100)
  expect(kept.admits('before')).toBe(true)
})

test('a replacement too large for the bound drops the old value', () => {
  const cache = filled(3, 100)
  expect(cache.set('k1', 'new', 301)).toBe(false)
  expect(cache.get('k1')).toBeUndefined()
  expect(cache.bytes).toBe(200)
})

test('a round is 65,536 misses at most, however many entries are held', () => {
  const many = filled(70_000)
  for (let i = 0; i < 65_536; i++) many.admits(`a${i}`) // the first round; the next ones would be 70,000 long
  expect(many.admits('late')).toBe(false)
  for (let i = 0; i < 66_000; i++) many.admits(`b${i}`)
  expect(many.admits('late')).toBe(false)
})

test('a cache of no bytes keeps nothing and admits nothing', () => {
  const none = new BoundedCache<string>(0)
  expect(none.admits('a')).toBe(false)
  expect(none.admits('a')).toBe(false)
  expect(none.set('a', 'a', 1)).toBe(false)
  expect(none.bytes).toBe(0)
})
