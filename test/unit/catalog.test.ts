/** The catalogue's list order: kept sorted in place as download counts and rankings change. */
import { expect, test } from 'bun:test'
import { Catalog } from '../../src/search/catalog'
import { Candidates } from '../../src/search/catalog-facts'
import type { SearchDoc } from '../../src/store/search-docs'
import { searchDoc } from '../support/search-doc'

const doc = (i: number, over: Partial<SearchDoc> = {}): SearchDoc =>
  searchDoc({ id: `node-${i}`, name: `Node ${i}`, searchRanking: i % 3, downloads: (i * 7919) % 50, ...over })

/** search_ranking desc, downloads desc, id asc: the order every list without a keyword walks. */
function expectSorted(catalog: Catalog) {
  const order = catalog.ordered()
  const entries = order.map((slot) => catalog.entry(slot)!)
  const sorted = [...entries].sort((a, b) => b.ranking - a.ranking || b.downloads - a.downloads || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  expect(entries.map((e) => e.id)).toEqual(sorted.map((e) => e.id))
  order.forEach((slot, i) => expect(catalog.rank(slot)).toBe(i))
}

test('download counts and rankings move nodes to their place, up and down, ends included', () => {
  const catalog = new Catalog()
  for (let i = 0; i < 300; i++) catalog.upsert(doc(i), true)
  catalog.finishLoad()
  expectSorted(catalog)
  let seed = 1
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
  for (let round = 0; round < 2000; round++) {
    const i = Math.floor(random() * 300)
    const before = catalog.entry(catalog.slotOf(`node-${i}`)!)!
    const r = random()
    if (r < 0.6) catalog.setDownloads(`node-${i}`, before.downloads + 1 + Math.floor(random() * 5))
    else if (r < 0.7) catalog.setDownloads(`node-${i}`, 0)
    else if (r < 0.8) catalog.setDownloads(`node-${i}`, 1_000_000 + round)
    else catalog.upsert(doc(i, { searchRanking: Math.floor(random() * 4), downloads: before.downloads }))
    if (round % 50 === 0) expectSorted(catalog)
  }
  expectSorted(catalog)
})

test('a count that leaves the order as it was reports no move', () => {
  const catalog = new Catalog()
  catalog.upsert(doc(1, { searchRanking: 0, downloads: 12 }))
  catalog.upsert(doc(2, { searchRanking: 0, downloads: 10 }))
  expect(catalog.setDownloads('node-2', 11)).toBe('none')
  expect(catalog.setDownloads('node-2', 13)).toBe('order')
  expect(catalog.ordered().map((s) => catalog.entry(s)!.id)).toEqual(['node-2', 'node-1'])
  expectSorted(catalog)
})

test('many counts at once (a flush) settle into the same order as one at a time', () => {
  const one = new Catalog()
  const many = new Catalog()
  for (let i = 0; i < 500; i++) {
    one.upsert(doc(i, { downloads: i % 4 }), true)
    many.upsert(doc(i, { downloads: i % 4 }), true)
  }
  one.finishLoad()
  many.finishLoad()
  let seed = 7
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
  for (let flush = 0; flush < 20; flush++) {
    const counts = new Map<string, number>()
    for (let k = 0; k < 40; k++) {
      const id = `node-${Math.floor(random() * 520)}` // some unknown
      counts.set(id, Math.floor(random() * 8))
    }
    for (const [id, n] of counts) one.setDownloads(id, n)
    const { unknown } = many.setDownloadsMany(counts)
    expect(unknown.sort()).toEqual([...counts.keys()].filter((id) => Number(id.slice(5)) >= 500).sort())
    expectSorted(many)
    expect(many.ordered()).toEqual(one.ordered())
  }
  expect(many.setDownloadsMany([['node-1', many.entry(many.slotOf('node-1')!)!.downloads]]).change).toBe('none')
})

test('candidates are the slots every selective filter allows', () => {
  // Slot 5 is in the first and last lists but not the middle one; 6 is in all three.
  const candidates = new Candidates(
    [
      [5, 6],
      [6, 7, 8],
      [5, 6],
    ],
    10,
  )
  expect(candidates.slots).toEqual([6])
  expect(candidates.size).toBe(1)
  expect([...Array(10).keys()].filter((slot) => candidates.has(slot))).toEqual([6])
  expect(new Candidates([[3, 1, 2]], 4).slots).toEqual([3, 1, 2])
})
