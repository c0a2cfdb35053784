/** NUL in parsed JSON: whether a value holds one (the quick walk every mirrored item gets), and where. */
import { describe, expect, test } from 'bun:test'
import { holdsNul, nulPath } from '../../src/domain/nul'

describe('NUL in a parsed value', () => {
  test.each([
    ['a plain object', { id: 'a', tags: ['x', 'y'], n: 1, none: null, deep: { list: [{ s: 'ok' }] } }, undefined],
    ['a string', 'a\0b', ''],
    ['a nested string', { id: 'a', deep: { list: [{ s: 'ok' }, { s: 'n\0' }] } }, 'deep.list.1.s'],
    ['a key', { id: 'a', translations: { 'e\0n': 'x' } }, 'translations.e\0n'],
    ['an array of strings', { tags: ['x', '\0'] }, 'tags.1'],
  ])('%s', (_name, value, at) => {
    expect(holdsNul(value)).toBe(at !== undefined)
    expect(nulPath(value)).toBe(at)
  })

  test('the first NUL in document order is named, wherever later ones stand', () => {
    expect(nulPath({ a: { b: ['ok', 'x\0'] }, c: '\0' })).toBe('a.b.1')
    expect(nulPath({ a: 'ok', ['k\0']: 'ok', z: '\0' })).toBe('k\0')
  })

  test('a value nested 100,000 levels deep is walked without overflowing, and its path named', () => {
    let value: unknown = { s: 'bottom\0' }
    for (let i = 0; i < 100_000; i++) value = [value]
    expect(holdsNul(value)).toBe(true)
    expect(nulPath(value)).toBe(`${'0.'.repeat(100_000)}s`)
    let clean: unknown = 'fine'
    for (let i = 0; i < 100_000; i++) clean = { x: clean }
    expect(holdsNul(clean)).toBe(false)
    expect(nulPath(clean)).toBeUndefined()
  })
})
