/**
 * The keyword index scores with KeywordScorer; MiniSearch's own search is the reference: the same slots with the
 * same scores, bit for bit, for words, prefixes, typos, several words and stop words, on the real packs, through
 * replaces and removals (documents discarded and not yet vacuumed: the scorer answers as MiniSearch does once they are).
 */
import { expect, test } from 'bun:test'
import { KeywordIndex, MAX_QUERY_WORDS } from '../../src/search/keyword'
import type { Scored } from '../../src/search/keyword-scorer'
import { hitsOf } from '../support/hits'
import type { SearchDoc } from '../../src/store/search-docs'
import { searchDoc } from '../support/search-doc'
import { REAL_NODES } from '../support/seed'

const FUZZY = { fuzzy: (term: string) => (term.length >= 5 ? 1 : false), maxFuzzy: 1 }

function doc(i: number, variant = 0): SearchDoc {
  const n = REAL_NODES[i % REAL_NODES.length]!
  const suffix = variant ? ` v${variant}` : ''
  return searchDoc({
    id: i < REAL_NODES.length ? n.id : `${n.id}-${i}`,
    name: n.name + suffix,
    description: n.description + suffix,
    author: n.author,
    publisherId: n.publisher,
    publisherName: n.publisher,
  })
}

/** Queries as people type them: whole words, prefixes, a letter dropped, two words, stop words only. */
function queries(): string[] {
  const words = [...new Set(REAL_NODES.flatMap((n) => `${n.name} ${n.description}`.toLowerCase().split(/[^a-z0-9]+/)))].filter(
    (w) => w.length >= 3,
  )
  const out = [
    'the',
    'comfyui nodes',
    'zzzzqqq',
    'upscale image',
    'ups',
    'lora loader',
    'face detailer',
    'lora lora',
    'image upscale image',
  ]
  for (let i = 0; i < words.length; i += 37) {
    const w = words[i]!
    out.push(w, w.slice(0, 3), w.slice(0, 4), `${w} ${words[(i * 7) % words.length]}`)
    if (w.length >= 6) out.push(w.slice(0, 2) + w.slice(3))
  }
  return out
}

type Mini = { search(text: string, options?: object): { id: number; score: number }[] }

/** Two indexes made alike: the first is asked through MiniSearch's search, the second through the scorer. */
function pair(build: (index: KeywordIndex) => void): [KeywordIndex, KeywordIndex] {
  const reference = new KeywordIndex()
  const scored = new KeywordIndex()
  build(reference)
  build(scored)
  return [reference, scored]
}

/** What the keyword index answered through MiniSearch: a typo-tolerant pass when the first finds under 20. */
function miniSearchAnswer(mini: Mini, q: string) {
  const plain = mini.search(q)
  return plain.length < 20 ? mini.search(q, FUZZY) : plain
}

function expectSame(referenceIndex: KeywordIndex, scored: KeywordIndex) {
  const reference = (referenceIndex as unknown as { mini: Mini }).mini
  let compared = 0
  for (const q of queries()) {
    const expected = miniSearchAnswer(reference, q)
    const answer = scored.search(q, () => 1)
    if (answer === undefined) {
      expect(expected).toEqual([])
      continue
    }
    const bySlot = (a: { slot: number }, b: { slot: number }) => a.slot - b.slot
    expect(hitsOf(answer).sort(bySlot)).toEqual(expected.map((r) => ({ slot: r.id, score: r.score })).sort(bySlot))
    compared += expected.length
  }
  expect(compared).toBeGreaterThan(10_000)
}

test('the scorer gives MiniSearch scores exactly, on compact postings and on Maps', () => {
  const [reference, scored] = pair((index) => {
    for (let i = 0; i < 3000; i++) index.put(i, doc(i), false)
    index.compact(true)
    // Added after the compaction: their postings are Maps still.
    for (let i = 3000; i < 3400; i++) index.put(i, doc(i), false)
  })
  expectSame(reference, scored)
  // New words one letter away from the queries' (the remembered fuzzy expansions must see them), then again.
  for (const index of [reference, scored]) {
    for (let i = 3400; i < 3600; i++) {
      const d = doc(i)
      index.put(i, { ...d, name: d.name.replace(/[aeiou]/, 'x'), description: d.description.replace(/[aeiou]([a-z])/g, '$1') }, false)
    }
  }
  expectSame(reference, scored)
})

test('with replaced and removed documents not yet vacuumed, the scorer gives the scores MiniSearch gives once they are', async () => {
  const [reference, scored] = pair((index) => {
    for (let i = 0; i < 3000; i++) index.put(i, doc(i), false)
    index.compact(true)
    for (let i = 0; i < 3000; i += 5) index.put(i, doc(i, 1), true)
    for (let i = 2; i < 3000; i += 9) index.remove(i)
  })
  // MiniSearch's own search on discarded documents' postings scores as if some were still there (the scorer's test
  // of a first search below); its answers once they are cleaned up are what a new index would give.
  await reference.cleanUp(async () => {}, 60_000)
  expect(reference.dirt.count).toBe(0)
  expect(scored.dirt.count).toBeGreaterThan(0)
  expectSame(reference, scored)
})

test('a weighted popularity multiplies each score', () => {
  const index = new KeywordIndex()
  for (let i = 0; i < 50; i++) index.put(i, doc(i), false)
  const once = hitsOf(index.search('image', () => 1))
  const twice = hitsOf(index.search('image', (slot) => (slot % 2 ? 2 : 1)))
  expect(once.length).toBeGreaterThan(0)
  for (const [i, h] of twice.entries()) expect(h.score).toBe(once[i]!.score * (h.slot % 2 ? 2 : 1))
})

test('answers stay the same when the marks restart from zero', () => {
  const index = new KeywordIndex()
  for (let i = 0; i < 1000; i++) index.put(i, doc(i), false)
  type Scorer = { mark: number; search(terms: string[]): Scored }
  const scorer = (index as unknown as { scorer: Scorer }).scorer
  // Two words: a restart between them would lose the first one's matches.
  const before = scorer.search(['image', 'prompt'])
  expect(before.ids.length).toBeGreaterThan(0)
  for (const near of [2 ** 30 - 5, 2 ** 30 - 4, 2 ** 30 - 3]) {
    scorer.mark = near
    expect(scorer.search(['image', 'prompt'])).toEqual(before)
  }
  expect(scorer.mark).toBeLessThan(10)
})

test('a query searches its first 32 words; a word given again is scored as MiniSearch scores it', () => {
  const [reference, scored] = pair((index) => {
    for (let i = 0; i < 600; i++) index.put(i, doc(i), false)
  })
  const mini = (reference as unknown as { mini: Mini }).mini
  const words = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? 'image' : i % 3 === 1 ? 'ima' : 'loader'))
  const first = words.slice(0, MAX_QUERY_WORDS).join(' ')
  const bySlot = (a: { slot: number }, b: { slot: number }) => a.slot - b.slot
  const expected = miniSearchAnswer(mini, first).map((r) => ({ slot: r.id, score: r.score }))
  expect(expected.length).toBeGreaterThan(0)
  expect(hitsOf(scored.search(words.join(' '), () => 1)).sort(bySlot)).toEqual(expected.sort(bySlot))
})

test('remembered typo expansions follow the index when a term leaves it (its sibling moves in the tree)', () => {
  const [reference, scored] = pair((index) => {
    // Added in this order, "abcdx" and "abcdxe" sit before "abcdf" under "abcd"; "abcdx" goes with document 0.
    for (const [slot, name] of ['abcdx', 'abcdxe', 'abcdf'].entries()) index.put(slot, searchDoc({ id: `t${slot}`, name }), false)
    for (let k = 0; k < 15; k++) {
      const filler = Array.from({ length: k }, (_, j) => `w${k}x${j}`).join(' ')
      const description = 'abcdxe '.repeat(k % 4) + 'abcdf '.repeat(k % 3)
      index.put(3 + k, searchDoc({ id: `t${3 + k}`, name: `abcde abcdxe abcdf ${filler}`, description }), false)
    }
    index.remove(0) // discarded, not vacuumed: the first search cleans its posting up and "abcdx" leaves the tree
  })
  const mini = (reference as unknown as { mini: Mini }).mini
  const bySlot = (a: { slot: number }, b: { slot: number }) => a.slot - b.slot
  for (let round = 0; round < 2; round++) {
    const expected = miniSearchAnswer(mini, 'abcde').map((r) => ({ slot: r.id, score: r.score }))
    expect(expected.length).toBe(17)
    expect(hitsOf(scored.search('abcde', () => 1)).sort(bySlot)).toEqual(expected.sort(bySlot))
  }
})

test('a search that meets discarded documents answers as a new index of the documents left, the first time too', () => {
  // Document 4, discarded and not vacuumed, holds "alpha" three times and comes after the others: MiniSearch's search
  // scored the documents it met before it as if it were still there, and took one of its occurrences a search, so
  // the next searches (the typo pass right after included) counted it again.
  const docs = (n: number) =>
    Array.from({ length: n }, (_, i) => searchDoc({ id: `n${i}`, name: i === 4 ? 'alpha alpha alpha' : `alpha w${i}` }))
  const discarded = new KeywordIndex()
  for (const [slot, d] of docs(5).entries()) discarded.put(slot, d, false)
  discarded.remove(4)
  const fresh = new KeywordIndex()
  for (const [slot, d] of docs(4).entries()) fresh.put(slot, d, false)
  const expected = hitsOf(fresh.search('alpha', () => 1))
  expect(expected).toHaveLength(4)
  for (let round = 0; round < 3; round++) expect(hitsOf(discarded.search('alpha', () => 1))).toEqual(expected)
})
