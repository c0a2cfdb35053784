/** The catalogue's list order: kept sorted in place as download counts and rankings change. */
import { expect, test } from 'bun:test'
import { Catalog, HANDED_OUT_HELD } from '../../src/search/catalog'
import { Candidates } from '../../src/search/catalog-facts'
import type { NodeQuery } from '../../src/domain/node-query'
import type { SearchDoc } from '../../src/store/search-docs'
import { searchDoc } from '../support/search-doc'

/** Node i, its platforms and status varied with i (some banned), so that walks with filters keep some and not others. */
const doc = (i: number, over: Partial<SearchDoc> = {}): SearchDoc =>
  searchDoc({
    id: `node-${i}`,
    name: `Node ${i}`,
    searchRanking: i % 3,
    downloads: (i * 7919) % 50,
    status: i % 17 === 5 ? 'banned' : 'active',
    osKeys: ['', '|posix :: linux|', '|microsoft :: windows|', '|posix :: linux|macos|'][i % 4]!,
    acceleratorKeys: ['', '|gpu|', '|gpu :: nvidia cuda|'][i % 3]!,
    ...over,
  })

/** What a plan collects from the whole order (from position 0). */
function collected(catalog: Catalog, q: Partial<NodeQuery>): number[] {
  const plan = catalog.plan({ includeBanned: false, offset: 0, limit: 10, ...q })
  const out = new Int32Array(catalog.ordered().length)
  return [...out.subarray(0, plan.collect(out, 0))]
}

/**
 * search_ranking desc, downloads desc, id asc: the order every list without a keyword walks; and the facts kept by
 * position follow it (a walk with filters keeps what the per-slot test keeps).
 */
function expectSorted(catalog: Catalog) {
  const order = catalog.ordered()
  const entries = order.map((slot) => catalog.keysOf(slot)!)
  const sorted = [...entries].sort((a, b) => b.ranking - a.ranking || b.downloads - a.downloads || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  expect(entries.map((e) => e.id)).toEqual(sorted.map((e) => e.id))
  order.forEach((slot, i) => expect(catalog.rank(slot)).toBe(i))
  for (const q of [{}, { os: 'Linux', accelerator: 'GPU' }, { includeBanned: true, os: 'Windows' }]) {
    const plan = catalog.plan({ includeBanned: false, offset: 0, limit: 10, ...q })
    expect(collected(catalog, q)).toEqual(order.filter((slot) => plan.keep(slot)))
  }
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
    const before = catalog.keysOf(catalog.slotOf(`node-${i}`)!)!
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
  expect(catalog.ordered().map((s) => catalog.keysOf(s)!.id)).toEqual(['node-2', 'node-1'])
  expectSorted(catalog)
})

test('many counts at once (a flush: a few moved one by one, many settled in one pass, or both) settle into the same order as one at a time', () => {
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
  for (let flush = 0; flush < 40; flush++) {
    const counts = new Map<string, number>()
    for (let k = 0; k < [1, 3, 40, 400][flush % 4]!; k++) {
      const id = `node-${Math.floor(random() * 520)}` // some unknown
      counts.set(id, Math.floor(random() * 8))
    }
    for (const [id, n] of counts) one.setDownloads(id, n)
    const { unknown } = many.setDownloadsMany(counts)
    expect(unknown.sort()).toEqual([...counts.keys()].filter((id) => Number(id.slice(5)) >= 500).sort())
    expectSorted(many)
    expect(many.ordered()).toEqual(one.ordered())
  }
  expect(many.setDownloadsMany([['node-1', many.keysOf(many.slotOf('node-1')!)!.downloads]]).change).toBe('none')
})

test('a node named twice in one flush stands once in the order, at its last count', () => {
  const catalog = new Catalog()
  for (let i = 1; i <= 3; i++) catalog.upsert(doc(i, { searchRanking: 0, downloads: 0 }))
  // node-3 and node-2 move two places each: past the order's size, so node-1's two counts wait for the one pass.
  catalog.setDownloadsMany([
    ['node-3', 10],
    ['node-2', 20],
    ['node-1', 5],
    ['node-1', 30],
  ])
  expect(catalog.ordered().map((s) => catalog.keysOf(s)!.id)).toEqual(['node-1', 'node-2', 'node-3'])
  expect(catalog.ordered().map((s) => catalog.rank(s))).toEqual([0, 1, 2])
  expectSorted(catalog)
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
  const one = new Candidates([[3, 1, 2]], 5)
  expect(one.slots).toEqual([3, 1, 2])
  expect([...Array(5).keys()].filter((slot) => one.has(slot))).toEqual([1, 2, 3])
})

test('a node given again says what changed: what filters or relevance read, its place in the order, or nothing', () => {
  const catalog = new Catalog()
  const base = { searchRanking: 1, downloads: 5 }
  catalog.upsert(doc(1, base))
  catalog.upsert(doc(2, { searchRanking: 1, downloads: 4 }))
  const again = (over: Partial<SearchDoc>) => catalog.upsert(doc(1, { ...base, ...over })).change
  expect(catalog.upsert(doc(3, { searchRanking: 1, downloads: 8 })).change).toBe('content') // new
  expect(again({})).toBe('none')
  expect(again({ downloads: 6 })).toBe('none') // the same place, the same popularity bucket
  expect(again({ downloads: 3 })).toBe('order') // below node-2 now
  const changes: Partial<SearchDoc>[] = [
    { status: 'banned' },
    { updatedAt: '2026-02-01T00:00:00.000Z' },
    { osKeys: '|linux|' },
    { acceleratorKeys: '|cuda|' },
    { repositoryKey: 'github.com/a/b' },
    { hostNodes: ['LoadImage'] },
    { downloads: 1000 }, // another popularity bucket: relevance changes
  ]
  for (const over of changes) {
    expect(again({ downloads: 3, ...over })).toBe('content')
    expect(again({ downloads: 3 })).toBe('content') // and back
    expect(again({ downloads: 3 })).toBe('none')
  }
  expect(again({ downloads: 4 })).not.toBe('content') // before node-2 again, by id
  // Another case of the same id sorts apart: NODE-2 comes before node-1.
  expect(catalog.upsert(doc(2, { id: 'NODE-2', searchRanking: 1, downloads: 4 })).change).toBe('order')
  expect(catalog.keysOf(catalog.slotOf('node-2')!)!.id).toBe('NODE-2')
  expect(catalog.ordered().map((s) => catalog.idOf(s))).toEqual(['node-3', 'NODE-2', 'node-1'])
  expectSorted(catalog)
})

test('a plan collects in list order exactly the slots its candidates and its per-slot test keep', () => {
  const catalog = new Catalog()
  const pick = <T>(i: number, values: T[]) => values[(i * 2654435761) % values.length]!
  const node = (i: number, turn: number) =>
    doc(i, {
      status: (i + turn) % 11 === 0 ? 'banned' : 'active',
      osKeys: pick(i + turn, ['', '|linux|', '|windows|', '|posix :: linux|macos|', '|os independent|']),
      acceleratorKeys: pick(i + 3 + turn, ['', '|gpu|', '|gpu :: nvidia cuda|', '|npu|']),
      updatedAt: new Date(Date.UTC(2026, 0, 1 + ((i + turn) % 40))).toISOString(),
    })
  for (let i = 0; i < 400; i++) catalog.upsert(node(i, 0))
  const queries = [
    {},
    { includeBanned: true },
    { os: 'Linux' },
    { os: 'MacOS', accelerator: 'GPU' },
    { accelerator: 'NPU', includeBanned: true },
    { changedSince: '2026-01-20T00:00:00.000Z' },
    { nodeIds: ['node-3', 'NODE-7', 'node-22', 'node-33', 'node-44'], os: 'Windows' },
    { nodeIds: ['node-5', 'node-10', 'nope'], includeBanned: true, changedSince: '2026-01-02T00:00:00.000Z' },
  ]
  function expectCollected() {
    const order = catalog.ordered()
    let kept = 0
    for (const q of queries) {
      const plan = catalog.plan({ includeBanned: false, offset: 0, limit: 10, ...q })
      const expected = order.filter((slot) => (!plan.candidates || plan.candidates.has(slot)) && plan.keep(slot))
      const out = new Int32Array(2 + order.length).fill(-1)
      const end = plan.collect(out, 2)
      expect([...out.subarray(2, end)]).toEqual(expected)
      expect(out[0]).toBe(-1) // what was before `at` is left as it was
      kept += expected.length
    }
    // The queries neither keep everything nor nothing.
    expect(kept).toBeGreaterThan(queries.length * 10)
    expect(kept).toBeLessThan(queries.length * 400)
  }
  expectCollected()
  // Facts changed where the nodes stand (their place in the order the same): the next walk sees them.
  const before = [...catalog.ordered()]
  for (let i = 0; i < 400; i += 3) catalog.upsert(node(i, 1))
  expect(catalog.ordered()).toEqual(before)
  expectCollected()
  // Nodes removed and added: the facts after them move with their slots.
  for (let i = 0; i < 400; i += 7) catalog.remove(`node-${i}`)
  for (let i = 400; i < 440; i++) catalog.upsert(node(i, 2))
  expect(catalog.ordered()).toHaveLength(400 - 58 + 40)
  expectCollected()
})

test('more distinct platform lists than 16 bits count are each told apart', () => {
  // Publishers choose their platforms' names: 70,000 nodes may declare as many distinct lists.
  const catalog = new Catalog()
  const n = 70_000
  for (let i = 0; i < n; i++)
    catalog.upsert(searchDoc({ id: `n${i}`, name: `n${i}`, osKeys: `|os ${i}|`, acceleratorKeys: `|acc ${i}|` }), true)
  catalog.finishLoad()
  for (const i of [5, 65_535, 65_536, 69_999]) {
    for (const q of [{ os: `OS ${i}` }, { accelerator: `ACC ${i}` }]) {
      const plan = catalog.plan({ includeBanned: false, offset: 0, limit: 10, ...q })
      expect(
        catalog
          .ordered()
          .filter((slot) => plan.keep(slot))
          .map((slot) => catalog.idOf(slot)),
      ).toEqual([`n${i}`])
      const out = new Int32Array(n)
      expect([...out.subarray(0, plan.collect(out, 0))].map((slot) => catalog.idOf(slot))).toEqual([`n${i}`])
    }
  }
})

test('a node given again during a bulk load, as if the order were kept, stands once in the order the load ends with', () => {
  const catalog = new Catalog()
  for (const [i, downloads] of [
    [1, 9],
    [2, 2],
    [3, 3],
  ] as const)
    catalog.upsert(doc(i, { searchRanking: 0, downloads }), true)
  // Not deferred, while the load has placed no slot yet: it overwrote the order's last slot.
  catalog.upsert(doc(3, { searchRanking: 0, downloads: 0 }))
  catalog.finishLoad()
  expect(catalog.ordered().map((slot) => catalog.idOf(slot))).toEqual(['node-1', 'node-2', 'node-3'])
  expectSorted(catalog)
  // Deferred once the order is sorted: it moves at once.
  catalog.upsert(doc(3, { searchRanking: 0, downloads: 5 }), true)
  expect(catalog.ordered().map((slot) => catalog.idOf(slot))).toEqual(['node-1', 'node-3', 'node-2'])
  expectSorted(catalog)
})

test('an id handed out is found again by its own string until its node is removed, then its new slot', () => {
  const catalog = new Catalog()
  for (let i = 0; i < 10; i++) catalog.upsert(doc(i, { id: `Node-${i}` }))
  const slot = catalog.slotOf('node-3')!
  const id = catalog.handOut(slot)
  expect(id).toBe('Node-3')
  expect([catalog.slotOf(id), catalog.slotOf('NODE-3'), catalog.slotOf('node-3')]).toEqual([slot, slot, slot])
  catalog.remove('node-3')
  expect(catalog.slotOf(id)).toBeUndefined()
  const again = catalog.upsert(doc(3, { id: 'Node-3' })).slot
  expect(again).not.toBe(slot)
  expect(catalog.slotOf(id)).toBe(again)
  // Past the bound, the ids handed out are forgotten and found as before.
  for (let n = 0; n <= HANDED_OUT_HELD; n++) catalog.handOut(catalog.slotOf(`node-${n % 10}`)!)
  for (let i = 0; i < 10; i++) expect(catalog.idOf(catalog.slotOf(`Node-${i}`)!)).toBe(`Node-${i}`)
})
