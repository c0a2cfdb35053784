/**
 * The total of versions across nodes is counted once per question until the store changes; a total past the paging
 * window is kept for a while whatever is written, so that an install (a write) before each page does not make every
 * page count a million index entries again.
 */
import { expect, test } from 'bun:test'
import { VersionTotals } from '../../src/services/version-totals'

function counter(total: number) {
  const calls = { n: 0 }
  return { calls, count: async () => (calls.n++, total) }
}

test('a total under the window is counted again after every write, and not before', async () => {
  let now = 0
  const totals = new VersionTotals({ exactBelow: 1000, keepMs: 60_000, now: () => now })
  const { calls, count } = counter(999)
  expect(await totals.get('q', 1, count)).toBe(999)
  expect(await totals.get('q', 1, count)).toBe(999)
  expect(calls.n).toBe(1)
  now += 10
  expect(await totals.get('q', 2, count)).toBe(999)
  expect(calls.n).toBe(2)
})

test('a total past the window is kept through writes until it is keepMs old, then counted again', async () => {
  let now = 0
  const totals = new VersionTotals({ exactBelow: 1000, keepMs: 60_000, now: () => now })
  const { calls, count } = counter(5000)
  await totals.get('q', 1, count)
  for (let serial = 2; serial < 50; serial++) {
    now += 1000
    expect(await totals.get('q', serial, count)).toBe(5000)
  }
  expect(calls.n).toBe(1)
  now += 12_000
  await totals.get('q', 51, count)
  expect(calls.n).toBe(2)
})

test('each question is counted and kept on its own', async () => {
  const totals = new VersionTotals({ exactBelow: 1000, keepMs: 60_000, now: () => 0 })
  const a = counter(5000)
  const b = counter(7)
  expect(await totals.get('a', 1, a.count)).toBe(5000)
  expect(await totals.get('b', 1, b.count)).toBe(7)
  expect(await totals.get('a', 2, a.count)).toBe(5000)
  expect(await totals.get('b', 2, b.count)).toBe(7)
  expect([a.calls.n, b.calls.n]).toEqual([1, 2])
})
