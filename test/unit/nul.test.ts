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
})
