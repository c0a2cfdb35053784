/** Remembered typo expansions: walked once per term and distance, bounded by bytes (see bounded-cache.test.ts). */
import { expect, test } from 'bun:test'
import { FuzzyMemo, type Expansions } from '../../src/search/fuzzy-memo'

test('a term is walked once per distance, and forgotten when cleared', () => {
  const memo = new FuzzyMemo()
  let walks = 0
  const walk = (): Expansions => (walks++, [['lora', 1]])
  expect(memo.get('lorra', 1, walk)).toEqual([['lora', 1]])
  expect(memo.get('lorra', 1, walk)).toEqual([['lora', 1]])
  expect(walks).toBe(1)
  memo.get('lorra', 2, walk)
  expect(walks).toBe(2)
  memo.clear()
  expect(memo.bytes).toBe(0)
  memo.get('lorra', 1, walk)
  expect(walks).toBe(3)
})

test('the bytes held stay within the bound; once nearly full, a term walked again is remembered', () => {
  const memo = new FuzzyMemo(2000)
  const terms = Array.from({ length: 100 }, (_, i) => `term${i}`)
  const walks = new Map<string, number>()
  const walkOf = (t: string) => (): Expansions => {
    walks.set(t, (walks.get(t) ?? 0) + 1)
    return [
      [`${t}x`, 1],
      [`${t}y`, 1],
    ]
  }
  for (const t of terms) {
    memo.get(t, 1, walkOf(t))
    expect(memo.bytes).toBeLessThanOrEqual(2000)
  }
  // Nearly full after the first terms: the later ones were walked and not kept, the first ones still are.
  memo.get(terms[0]!, 1, walkOf(terms[0]!))
  expect(walks.get(terms[0]!)).toBe(1)
  // A term walked again is kept now.
  for (const t of [terms[99]!, terms[99]!, terms[99]!]) memo.get(t, 1, walkOf(t))
  expect(walks.get(terms[99]!)).toBe(2)
  // An entry larger than the whole bound is answered, not kept.
  const huge: Expansions = Array.from({ length: 200 }, (_, i) => [`w${i}`, 1] as const)
  expect(memo.get('huge', 1, () => huge)).toBe(huge)
  expect(memo.bytes).toBeLessThanOrEqual(2000)
})
