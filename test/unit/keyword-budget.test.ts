/**
 * A search reads a bounded number of postings (MAX_POSTINGS_READ): each word reads all of its own whatever the words
 * before it kept, so many words that each match most packs (typos of one common word, which the typo pass expands to
 * it) cost a pass over most of the index per word. Past the bound the query's further words are ignored.
 */
import { expect, test } from 'bun:test'
import { KeywordIndex, MAX_QUERY_WORDS } from '../../src/search/keyword'
import { MAX_POSTINGS_READ } from '../../src/search/keyword-scorer'
import { hitsOf } from '../support/hits'
import { searchDoc } from '../support/search-doc'

/** `count` packs whose descriptions all say "variant", each with a word of its own. */
function catalogue(index: KeywordIndex, count: number) {
  for (let slot = 0; slot < count; slot++) {
    index.put(slot, searchDoc({ id: `pack-${slot}`, name: `Pack ${slot}`, description: `variant number${slot} shared` }), false)
  }
}

/** Words one typo away from "variant", none of them in the index: the typo pass expands each to "variant". */
const typos = (count: number) =>
  Array.from({ length: count }, (_, i) => {
    const at = i % 7
    return 'variant'.slice(0, at) + 'xqzjkbw'[Math.floor(i / 7)] + 'variant'.slice(at + 1)
  })

test('32 typos of a word every pack holds read the bound of postings, not one pass over the index per word', () => {
  const index = new KeywordIndex({ maxPostingsRead: 1000 })
  catalogue(index, 400)
  const words = typos(MAX_QUERY_WORDS)
  const hits = index.search(words.join(' '), () => 1)
  expect(hits?.ids.length).toBe(400)
  // The bound, and at most the one word that crossed it (400 packs, one field).
  expect(index.postingsRead).toBeLessThanOrEqual(1000 + 400)
})

test('the words read before the bound answer as a query of only those words would', () => {
  const bounded = new KeywordIndex({ maxPostingsRead: 1000 })
  const unbounded = new KeywordIndex({ maxPostingsRead: Infinity })
  catalogue(bounded, 600)
  catalogue(unbounded, 600)
  // "variant" and "shared" read 600 postings each: the bound is crossed after the second, "pack" is ignored.
  const answer = hitsOf(bounded.search('variant shared pack', () => 1))
  expect(answer).toEqual(hitsOf(unbounded.search('variant shared', () => 1)))
  expect(answer).not.toEqual(hitsOf(unbounded.search('variant shared pack', () => 1)))
  expect(answer.length).toBe(600)
})

test('the bound is above anything the real registry can read: a word of every one of 100,000 packs fits twice', () => {
  expect(MAX_POSTINGS_READ).toBeGreaterThanOrEqual(200_000)
})
