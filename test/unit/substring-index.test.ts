/** Substring search in blocks: a change rebuilds only the block holding the slot it changed. */
import { expect, test } from 'bun:test'
import { SubstringIndex } from '../../src/search/substring-index'

test('finds every slot containing the needle, in slot order, across blocks', () => {
  const values = Array.from({ length: 10_000 }, (_, i) => (i % 1000 === 7 ? `github.com/acme/pack-${i}` : `github.com/other/x${i}`))
  const index = new SubstringIndex(
    (slot) => values[slot],
    () => values.length,
  )
  expect(index.search('acme/pack')).toEqual([7, 1007, 2007, 3007, 4007, 5007, 6007, 7007, 8007, 9007])
  expect(index.search('')).toEqual([])
  expect(index.search('a\nb')).toEqual([])
})

test('a change rebuilds only its block; new slots are found too', () => {
  const values: (string | undefined)[] = Array.from({ length: 10_000 }, (_, i) => `value ${i}`)
  let reads = 0
  const index = new SubstringIndex(
    (slot) => (reads++, values[slot]),
    () => values.length,
  )
  index.search('value 1')
  expect(reads).toBe(10_000)
  values[9_000] = 'changed'
  index.invalidate(9_000)
  reads = 0
  expect(index.search('changed')).toEqual([9_000])
  expect(reads).toBeLessThanOrEqual(4096)
  values[5] = undefined // removed
  values.push('brand new')
  index.invalidate(5)
  index.invalidate(10_000)
  expect(index.search('value 5')).not.toContain(5)
  expect(index.search('brand new')).toEqual([10_000])
})

test('values past ASCII: each hit is the slot holding it', () => {
  const values = ['日本語ノード', 'café crème', 'plain', '🎨 paint 🎨 brush', 'crème brûlée', 'ノード']
  const index = new SubstringIndex(
    (slot) => values[slot],
    () => values.length,
  )
  expect(index.search('crème')).toEqual([1, 4])
  expect(index.search('ノード')).toEqual([0, 5])
  expect(index.search('brush')).toEqual([3])
  expect(index.search('🎨')).toEqual([3])
  expect(index.search('ée')).toEqual([4])
  expect(index.search('plain')).toEqual([2])
})
