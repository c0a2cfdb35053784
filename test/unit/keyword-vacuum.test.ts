/**
 * Discarded documents' postings are cleaned up a slice of terms at a time over a copy of the term list, never by
 * MiniSearch's own vacuum: a term added during one of its pauses split a node its walk held, the walk threw
 * unhandled, and the process ended (a publisher of 1,200 nodes renamed, then anything written).
 */
import { expect, test } from 'bun:test'
import { KeywordIndex } from '../../src/search/keyword'
import { searchDoc } from '../support/search-doc'

const doc = (slot: number, words: string) => searchDoc({ id: `node-${slot}`, name: words, description: `${words} ${slot}` })
const found = (index: KeywordIndex, text: string) => index.search(text, () => 1)?.ids.length ?? 0

test('a tenth of the documents replaced are cleaned up in slices while new terms split the tree between them', async () => {
  const index = new KeywordIndex()
  for (let slot = 0; slot < 200; slot++) index.put(slot, doc(slot, `sprocket wheel${slot}`), false)
  index.compact(true)
  for (let slot = 0; slot < 30; slot++) index.put(slot, doc(slot, 'flywheel gear'), true)
  // Nothing runs behind the writes by itself.
  await Promise.resolve()
  expect(index.dirt).toEqual({ count: 30, vacuuming: false })
  expect(index.needsCleanUp).toBe(true)
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
  expect(index.dirt.vacuuming).toBe(true)
  await cleaning
  expect(pauses).toBeGreaterThan(100)
  expect(index.dirt).toEqual({ count: 5, vacuuming: false })
  expect(index.needsCleanUp).toBe(false)
  expect(found(index, 'flywheel')).toBe(35)
  expect(found(index, 'sprocket')).toBe(200 - 35 + (next - 200))
})
