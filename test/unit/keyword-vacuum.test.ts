/**
 * Discarded documents' postings are cleaned up a slice of terms at a time over a copy of the term list, never by
 * MiniSearch's own vacuum: a term added during one of its pauses split a node its walk held, the walk threw
 * unhandled, and the process ended (a publisher of 1,200 nodes renamed, then anything written).
 */
import { expect, test } from 'bun:test'
import { KeywordIndex } from '../../src/search/keyword'
import type { MiniSearchInternals } from '../../src/search/minisearch-internals'
import { searchDoc } from '../support/search-doc'

const doc = (slot: number, words: string) => searchDoc({ id: `node-${slot}`, name: words, description: `${words} ${slot}` })

const internals = (index: KeywordIndex) => (index as unknown as { mini: MiniSearchInternals }).mini

/** The short ids of the documents discarded whose postings are still held. */
function deadPostings(index: KeywordIndex): Set<number> {
  const m = internals(index)
  const dead = new Set<number>()
  for (const term of m._index.keys())
    for (const [, postings] of m._index.get(term)!) for (const [id] of postings) if (!m._documentIds.has(id)) dead.add(id)
  return dead
}

/** Every hit of each query as slot and score, in slot order. */
const hits = (index: KeywordIndex, queries: string[]) =>
  queries.map((q) => {
    const found = index.search(q, () => 1)!
    return Array.from(found.ids, (slot, i) => [slot, found.scores[i]!] as const).sort((a, b) => a[0] - b[0])
  })

/** 200 documents, compact, then 30 of them replaced: a tenth and more of the index is dirt. */
function dirtied(): KeywordIndex {
  const index = new KeywordIndex()
  for (let slot = 0; slot < 200; slot++) index.put(slot, doc(slot, `sprocket wheel${slot}`), false)
  index.compact(true)
  for (let slot = 0; slot < 30; slot++) index.put(slot, doc(slot, 'flywheel gear'), true)
  return index
}

test('with nothing written meanwhile, the cleanup leaves no posting of a discarded document and the scores of a new index', async () => {
  const index = dirtied()
  await Promise.resolve()
  // Nothing runs behind the writes by itself.
  expect(index.dirt).toEqual({ count: 30, cleaning: false })
  expect(deadPostings(index).size).toBe(30)
  await index.cleanUp(async () => {}, 0)
  expect(index.dirt).toEqual({ count: 0, cleaning: false })
  expect(deadPostings(index).size).toBe(0)
  const fresh = new KeywordIndex()
  for (let slot = 0; slot < 200; slot++) fresh.put(slot, slot < 30 ? doc(slot, 'flywheel gear') : doc(slot, `sprocket wheel${slot}`), false)
  const queries = ['sprocket', 'flywheel', 'gear', 'wheel150', 'sprocket gear']
  const [after, expected] = [hits(index, queries), hits(fresh, queries)]
  after.forEach((list, q) => {
    expect(list.map(([slot]) => slot)).toEqual(expected[q]!.map(([slot]) => slot))
    list.forEach(([, score], i) => expect(score).toBeCloseTo(expected[q]![i]![1], 9))
  })
})

test('terms that split the tree between slices, and documents replaced meanwhile, are safe; those stay counted', async () => {
  const index = dirtied()
  const deadBefore = deadPostings(index)
  let pauses = 0
  let next = 200
  // Between slices (a term each): terms that split the tree's edges (prefixes and extensions of held ones), and
  // documents replaced, whose dirt the cleanup leaves counted.
  const pause = async () => {
    pauses++
    index.put(next, doc(next, `sprock wheel${next}x sprocketeer${next}`), false)
    next++
    if (pauses <= 5) index.put(100 + pauses, doc(100 + pauses, 'flywheel gear'), true)
    await Promise.resolve()
  }
  const cleaning = index.cleanUp(pause, 0)
  expect(index.dirt.cleaning).toBe(true)
  await cleaning
  expect(pauses).toBeGreaterThan(100)
  expect(index.dirt).toEqual({ count: 5, cleaning: false })
  expect([...deadPostings(index)].filter((id) => deadBefore.has(id))).toEqual([])
  expect(index.search('flywheel', () => 1)?.ids.length).toBe(35)
  expect(index.search('sprocket', () => 1)?.ids.length).toBe(200 - 35 + (next - 200))
})

test('a cleanup stopped after a pause (the index closed) counts nothing as cleaned up', async () => {
  const index = dirtied()
  await index.cleanUp(
    async () => {},
    0,
    () => true,
  )
  expect(index.dirt).toEqual({ count: 30, cleaning: false })
  expect(index.needsCleanUp).toBe(true)
})
