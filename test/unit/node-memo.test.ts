/** The per-node memo under the install and archive lookups: bounded by bytes, values' own sizes counted, dropped on a change. */
import { expect, test } from 'bun:test'
import { createNodeMemo } from '../../src/services/node-memo'

/** A change sequence as the node JSON cache keeps one: `change(id)` marks that node changed now. */
function changes() {
  const changedAt = new Map<string, number>()
  const state = {
    sequence: 0,
    contentChangedAfter: (id: string, since: number) => (changedAt.get(id) ?? 0) > since,
    change(id: string) {
      changedAt.set(id, ++state.sequence)
    },
  }
  return state
}

const text = (n: number) => 'x'.repeat(n)

test("holds at most its bytes, counting each value's own size, the oldest out first", () => {
  const c = changes()
  // Key "n0" costs 4, the entry 96 and the text 900: 1,000 bytes each; 3 fit in 3,200, past seven eighths of it.
  const memo = createNodeMemo<string>(c, 3_200, 96, (v) => v.length)
  for (let i = 0; i < 3; i++) memo.set(`n${i}`, `n${i}`, c.sequence, text(900))
  expect([0, 1, 2].map((i) => memo.get(`n${i}`) !== undefined)).toEqual([true, true, true])
  // Nearly full: a key set for the first time is not kept; set again, it is, pushing out as many of the oldest as
  // it needs.
  memo.set('n5', 'n5', c.sequence, text(1_900))
  expect(memo.get('n5')).toBeUndefined()
  memo.set('n5', 'n5', c.sequence, text(1_900))
  expect([0, 1, 2, 5].map((i) => memo.get(`n${i}`) !== undefined)).toEqual([false, false, true, true])
  // One that cannot fit at all is not kept, and costs what was there nothing.
  memo.set('big', 'big', c.sequence, text(4_000))
  memo.set('big', 'big', c.sequence, text(4_000))
  expect(memo.get('big')).toBeUndefined()
  expect(memo.get('n2')).toBe(text(900))
  // Replacing a key frees its old size first.
  memo.set('n2', 'n2', c.sequence, text(100))
  memo.set('n6', 'n6', c.sequence, text(900))
  expect([2, 5, 6].map((i) => memo.get(`n${i}`) !== undefined)).toEqual([true, true, true])
})

test('a change to its node drops an entry; one read before a change is not kept', () => {
  const c = changes()
  const memo = createNodeMemo<string>(c, 10_000, 96)
  memo.set('a\n', 'a', c.sequence, 'answer of a')
  memo.set('b\n', 'b', c.sequence, 'answer of b')
  c.change('a')
  expect(memo.get('a\n')).toBeUndefined()
  expect(memo.get('b\n')).toBe('answer of b')
  const started = memo.start()
  c.change('b') // lands while b's answer is being read
  memo.set('b\n', 'b', started, 'stale answer of b')
  expect(memo.get('b\n')).toBeUndefined()
})
