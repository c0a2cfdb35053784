/**
 * Matches by score put in order only as far as a page asks: every page equals the same page of a full sort (score
 * highest first, then list place, then slot), with the lead first, whatever order pages are asked in.
 */
import { expect, test } from 'bun:test'
import { byScore, inOrder } from '../../src/search/matches'
import { seededRandom } from '../../scripts/bench/random'

function hits(count: number, seed: number) {
  const random = seededRandom(seed)
  const slots = Int32Array.from({ length: count }, (_, i) => 10 * i + 3)
  // Few distinct scores (ties are the rule among copies of one pack) and some shared list places.
  const scores = Float64Array.from({ length: count }, () => Math.floor(random() * 20) / 3)
  const ranks = Int32Array.from({ length: count }, () => Math.floor(random() * count * 0.8))
  return { slots, scores, ranks }
}

function fullSort(h: ReturnType<typeof hits>): number[] {
  return [...h.slots.keys()]
    .sort((a, b) => h.scores[b]! - h.scores[a]! || h.ranks[a]! - h.ranks[b]! || h.slots[a]! - h.slots[b]!)
    .map((i) => h.slots[i]!)
}

test('every page of a large answer equals that page of a full sort, in any order of asking', () => {
  const h = hits(5000, 1)
  const expected = [7, 1, 2, 9].concat(fullSort(h))
  const matches = byScore(Int32Array.from([7, 1, 2, 9]), { slots: h.slots.slice(), scores: h.scores.slice(), ranks: h.ranks.slice() })
  expect(matches.total).toBe(5004)
  const pages: [number, number][] = [
    [0, 10],
    [0, 2],
    [3, 13],
    [10, 20],
    [200, 230],
    [60, 70],
    [1000, 1100],
    [4990, 5010],
    [5004, 5010],
    [3, 4],
  ]
  for (const [from, to] of pages) expect([...matches.slice(from, to)]).toEqual(expected.slice(from, to))
  expect([...matches.slice(0, 6000)]).toEqual(expected)
})

test('small answers, no lead, and a lead alone', () => {
  for (const count of [0, 1, 2, 5, 63, 64, 65, 300]) {
    const h = hits(count, count + 2)
    const matches = byScore(new Int32Array(0), h)
    expect([...matches.slice(0, 10)]).toEqual(fullSort(h).slice(0, 10))
    expect([...matches.slice(0, count + 1)]).toEqual(fullSort(h))
  }
  const lead = byScore(Int32Array.from([4, 2]), hits(0, 1))
  expect(lead.total).toBe(2)
  expect([...lead.slice(1, 10)]).toEqual([2])
})

test('lists in order are sliced as they are', () => {
  const m = inOrder(Int32Array.from([5, 3, 8]))
  expect(m.total).toBe(3)
  expect([...m.slice(1, 5)]).toEqual([3, 8])
  expect(m.bytes).toBe(12)
})
