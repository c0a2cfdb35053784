/** When nodes last changed, bounded: exact while few are held, conservative (changed) for what came before a bound. */
import { expect, test } from 'bun:test'
import { ChangeTimes } from '../../src/services/change-times'
import { CHANGES_HELD, createNodeJsonCache } from '../../src/services/node-json'
import { openStore } from '../../src/store/db'

test('exact while within the bound', () => {
  const times = new ChangeTimes(3)
  times.set('a', 1)
  times.set('b', 2)
  times.set('a', 3)
  expect([times.after('a', 2), times.after('a', 3), times.after('b', 1), times.after('b', 2), times.after('c', 0)]).toEqual([
    true,
    false,
    true,
    false,
    false,
  ])
  expect(times.allAfter(0)).toBe(false)
})

test('past the bound, the older half count as changed at the newest of them, and the rest is exact', () => {
  const times = new ChangeTimes(4)
  for (const [i, id] of ['a', 'b', 'c', 'd', 'e'].entries()) times.set(id, i + 1)
  // Five held, past four: the three oldest (a, b, c) forgotten behind a floor at c's change (3).
  expect(times.size).toBe(2)
  expect([times.after('a', 2), times.after('never named', 2), times.allAfter(2)]).toEqual([true, true, true])
  expect([times.after('a', 3), times.after('never named', 3), times.allAfter(3)]).toEqual([false, false, false])
  expect([times.after('d', 3), times.after('d', 4), times.after('e', 4)]).toEqual([true, false, true])
  // A node changing again moves to the newest end: it is forgotten after those that did not.
  times.set('f', 6)
  times.set('g', 7)
  times.set('d', 8) // held in the order e, f, g, d
  times.set('h', 9) // five again: e, f and g forgotten, behind g's change; d is not
  expect([times.after('d', 7), times.after('e', 6), times.after('g', 6), times.after('g', 7), times.allAfter(7)]).toEqual([
    true,
    true,
    true,
    false,
    false,
  ])
})

test('forgetAll: every node changed at that point, and never lowers the floor', () => {
  const times = new ChangeTimes(10)
  times.set('a', 1)
  times.forgetAll(7)
  expect([times.after('a', 6), times.after('z', 6), times.after('a', 7), times.size]).toEqual([true, true, false, 0])
  times.forgetAll(5)
  expect(times.allAfter(6)).toBe(true)
})

test("the node JSON cache holds so many nodes' changes at most, and answers for the others as changed", async () => {
  const db = await openStore(':memory:')
  try {
    const cache = createNodeJsonCache(db, 'http://x')
    const before = cache.sequence
    cache.countsChanged(new Map([['a-pack', 1]]))
    const between = cache.sequence
    expect([cache.changedAfter(['a-pack'], before), cache.changedAfter(['b-pack'], before)]).toEqual([true, false])
    // A flush naming more nodes than are held one by one.
    cache.countsChanged(new Map(Array.from({ length: CHANGES_HELD }, (_, i) => [`node-${i}`, 1])))
    const after = cache.sequence
    expect([cache.changedAfter(['b-pack'], between), cache.changedAfter([], between)]).toEqual([true, true])
    expect([cache.changedAfter(['b-pack'], after), cache.changedAfter(['node-1'], after)]).toEqual([false, false])
    cache.nodesChanged(['b-pack'])
    expect([
      cache.changedAfter(['b-pack'], after),
      cache.contentChangedAfter('b-pack', after),
      cache.changedAfter(['c-pack'], after),
    ]).toEqual([true, true, false])
  } finally {
    await db.destroy()
  }
})
