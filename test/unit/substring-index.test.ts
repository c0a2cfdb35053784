/** Substring search in blocks: a change rebuilds only the block holding the slot it changed. */
import { expect, test } from 'bun:test'
import { SubstringIndex } from '../../src/search/substring-index'

/** An index holding these values, slot by slot. */
function indexed(values: readonly (string | undefined)[]): SubstringIndex {
  const index = new SubstringIndex()
  values.forEach((value, slot) => index.set(slot, value))
  return index
}

test('finds every slot containing the needle, in slot order, across blocks', () => {
  const values = Array.from({ length: 10_000 }, (_, i) => (i % 1000 === 7 ? `github.com/acme/pack-${i}` : `github.com/other/x${i}`))
  const index = indexed(values)
  expect(index.search('acme/pack')).toEqual([7, 1007, 2007, 3007, 4007, 5007, 6007, 7007, 8007, 9007])
  expect(index.search('')).toEqual([])
  expect(index.search('a\nb')).toEqual([])
})

test('a change rebuilds only its block, keeping the values it did not change; new slots are found too', () => {
  const values: (string | undefined)[] = Array.from({ length: 10_000 }, (_, i) => `value ${i}`)
  const index = indexed(values)
  index.search('value 1')
  expect(index.builtBlocks).toBe(20)
  values[9_000] = 'changed'
  index.set(9_000, values[9_000])
  expect(index.search('changed')).toEqual([9_000])
  expect(index.builtBlocks).toBe(21)
  expect(index.search('value 9001')).toEqual([9_001]) // its neighbours, from the block's text as built
  expect(index.search('value 9000')).toEqual([])
  values[5] = undefined // removed
  values.push('brand new')
  index.set(5, values[5])
  index.set(10_000, values[10_000])
  expect(index.search('value 5')).not.toContain(5)
  expect(index.search('brand new')).toEqual([10_000])
  // Every value as set, the unchanged ones read back from the blocks' texts.
  const expected = values.flatMap((v, slot) => (v?.includes('value 4') ? [slot] : []))
  expect(index.search('value 4')).toEqual(expected)
})

test('values past ASCII: each hit is the slot holding it', () => {
  const values = ['日本語ノード', 'café crème', 'plain', '🎨 paint 🎨 brush', 'crème brûlée', 'ノード']
  const index = indexed(values)
  expect(index.search('crème')).toEqual([1, 4])
  expect(index.search('ノード')).toEqual([0, 5])
  expect(index.search('brush')).toEqual([3])
  expect(index.search('🎨')).toEqual([3])
  expect(index.search('ée')).toEqual([4])
  expect(index.search('plain')).toEqual([2])
})

/** Values like host node names, from a small alphabet so that needles often match, across many blocks. */
function randomValues(count: number, seed: number): string[] {
  let state = seed
  const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32
  const letters = 'abcdeé日 _'
  const word = () => Array.from({ length: 1 + Math.floor(random() * 12) }, () => letters[Math.floor(random() * letters.length)]).join('')
  return Array.from({ length: count }, () => Array.from({ length: Math.floor(random() * 4) }, word).join('\n'))
}

test('the trigram filter never loses a match: the same slots as scanning every value, for needles of any length', () => {
  const values = randomValues(3_000, 7)
  const index = indexed(values)
  const needles = new Set<string>()
  for (let slot = 0; needles.size < 400; slot = (slot + 37) % values.length) {
    const names = values[slot]!.split('\n')
    const name = names[names.length - 1]!
    const length = 1 + (slot % 8)
    // From within a name, and the end of a slot's last one (where a block's text may end).
    needles.add(slot % 2 ? name.slice(Math.floor(name.length / 3)).slice(0, length) : name.slice(-length))
  }
  needles.delete('')
  for (const needle of needles) {
    const expected = values.flatMap((v, slot) => (v.split('\n').some((name) => name.includes(needle)) ? [slot] : []))
    expect({ needle, slots: index.search(needle) }).toEqual({ needle, slots: expected })
  }
})

test('a needle spanning two values of a slot matches neither', () => {
  const values = ['loadimage\nsaveimage', 'imagesave']
  const index = indexed(values)
  expect(index.search('imagesave')).toEqual([1])
  expect(index.search('image\nsave')).toEqual([])
})

test('a rare needle reads only the blocks that may hold it', () => {
  const values = Array.from({ length: 20_000 }, (_, i) => (i === 12_345 ? 'KSamplerAdvancedRare'.toLowerCase() : `node class ${i % 977}`))
  values[511] = 'first block ends with qvx' // the last bytes of a block's text
  values[512] = 'jwz starts the second'
  const index = indexed(values)
  index.search('class 12') // builds every block
  const before = index.scannedBlocks
  expect(index.search('kampleradvancedrare'.slice(1))).toEqual([12_345])
  expect(index.scannedBlocks - before).toBeLessThanOrEqual(2) // of 40 blocks
  expect(index.search('qvx')).toEqual([511])
  expect(index.search('jwz')).toEqual([512])
  const common = index.scannedBlocks
  expect(index.search('node class').length).toBe(19_997)
  expect(index.scannedBlocks - common).toBeGreaterThanOrEqual(39)
})

test('rebuildStale builds at least one block a call until none is left, and searches then build none', () => {
  const values = Array.from({ length: 5_000 }, (_, i) => `value ${i}`)
  const index = indexed(values)
  let calls = 0
  while (index.rebuildStale(0)) calls++ // a deadline already past: one block each call
  expect(calls).toBe(Math.ceil(5_000 / 512) - 1)
  expect(index.builtBlocks).toBe(10)
  expect(index.search('value 4999')).toEqual([4_999])
  expect(index.builtBlocks).toBe(10)
  values[3] = 'changed'
  index.set(3, values[3])
  expect(index.rebuildStale(performance.now() + 1_000)).toBe(false)
  expect(index.builtBlocks).toBe(11)
})

test('a whole line is found exactly: the same slots as comparing every line, never a part of a longer one', () => {
  const values = randomValues(3_000, 11)
  values[511] = 'last of block one' // a block's text ends after it
  values[512] = 'first of block two\nand more'
  const index = indexed(values)
  const lines = new Set(['last of block one', 'first of block two', 'and more', 'block', 'of block two', 'first of block'])
  for (let slot = 0; lines.size < 300; slot = (slot + 29) % values.length) for (const line of values[slot]!.split('\n')) lines.add(line)
  lines.delete('')
  for (const line of lines) {
    const expected = values.flatMap((v, slot) => (v.split('\n').includes(line) ? [slot] : []))
    expect({ line, slots: index.slotsWithLine(line) }).toEqual({ line, slots: expected })
  }
  expect(index.slotsWithLine('')).toEqual([])
  expect(index.slotsWithLine('and more\nfirst')).toEqual([])
})

test('a rare line reads only the blocks that may hold it, and follows a change', () => {
  const values = Array.from({ length: 20_000 }, (_, i) => `loadimage\nnode class ${i % 977}`)
  values[12_345] = 'loadimage\nksampleradvancedrare'
  const index = indexed(values)
  expect(index.slotsWithLine('loadimage').length).toBe(20_000)
  const before = index.scannedBlocks
  expect(index.slotsWithLine('ksampleradvancedrare')).toEqual([12_345])
  expect(index.scannedBlocks - before).toBeLessThanOrEqual(2) // of 40 blocks
  expect(index.slotsWithLine('ksampleradvanced')).toEqual([])
  values[12_345] = 'loadimage'
  values[3] = 'ksampleradvancedrare'
  index.set(12_345, values[12_345])
  index.set(3, values[3])
  expect(index.slotsWithLine('ksampleradvancedrare')).toEqual([3])
})

test('a line is found whatever else its value holds: past Latin-1, or beside wide characters', () => {
  const values = ['日本語ノード\nloadimage', 'loadimage\ncafé', '🎨 paint\ncafé', 'plain']
  const index = indexed(values)
  expect(index.slotsWithLine('loadimage')).toEqual([0, 1])
  expect(index.slotsWithLine('café')).toEqual([1, 2])
  expect(index.slotsWithLine('日本語ノード')).toEqual([0])
  expect(index.slotsWithLine('🎨 paint')).toEqual([2])
  expect(index.slotsWithLine('paint')).toEqual([])
})

test('values past ASCII survive their block being built again for a change beside them', () => {
  const values: (string | undefined)[] = ['日本語ノード\nloadimage', 'café crème', '🎨 paint 🎨 brush', 'plain']
  const index = indexed(values)
  expect(index.search('crème')).toEqual([1])
  index.set(3, 'plain again')
  index.set(1, undefined)
  expect(index.search('crème')).toEqual([])
  expect(index.search('🎨 brush')).toEqual([2])
  expect(index.slotsWithLine('日本語ノード')).toEqual([0])
  expect(index.slotsWithLine('loadimage')).toEqual([0])
  expect(index.search('plain again')).toEqual([3])
})
