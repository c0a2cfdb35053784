/** The resumed oldest-key iterator caches evict by: insertion order through deletes, re-inserts and clears. */
import { expect, test } from 'bun:test'
import { oldestFirst } from '../../src/oldest-first'

test('gives keys oldest first, a re-inserted key as the newest, and keys added after it ran dry', () => {
  const map = new Map<string, number>()
  const oldest = oldestFirst(map)
  expect(oldest()).toBeUndefined()
  for (const k of ['a', 'b', 'c']) map.set(k, 1)
  expect(oldest()).toBe('a')
  map.delete('a')
  map.delete('b')
  map.set('b', 2) // re-inserted: now the newest
  map.set('d', 1)
  expect(oldest()).toBe('c')
  map.delete('c')
  expect(oldest()).toBe('b')
  map.delete('b')
  expect(oldest()).toBe('d')
  map.delete('d')
  expect(oldest()).toBeUndefined()
  map.set('e', 1)
  expect(oldest()).toBe('e')
  map.clear()
  map.set('f', 1)
  expect(oldest()).toBe('f')
})
