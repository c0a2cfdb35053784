/**
 * Discarded documents' postings are cleaned up in one walk of the term tree, never in MiniSearch's batches with
 * pauses between them: a term added during a pause split a node the walk held, the walk threw unhandled, and the
 * process ended (a publisher of 1,200 nodes renamed, then anything written).
 */
import { expect, test } from 'bun:test'
import { KeywordIndex } from '../../src/search/keyword'
import { searchDoc } from '../support/search-doc'

const doc = (slot: number, words: string) => searchDoc({ id: `node-${slot}`, name: words, description: `${words} ${slot}` })

test('replacing a tenth of the documents and more cleans up at the next compaction, whole, with no walk left running', async () => {
  const index = new KeywordIndex()
  for (let slot = 0; slot < 200; slot++) index.put(slot, doc(slot, 'sprocket wheel'), false)
  index.compact(true)
  for (let slot = 0; slot < 30; slot++) index.put(slot, doc(slot, 'flywheel gear'), true)
  // Nothing runs behind the writes: without compact() the dirt stays.
  await Promise.resolve()
  expect(index.dirt).toEqual({ count: 30, vacuuming: false })
  index.compact()
  // New terms straight after (a split of the tree's nodes) are safe: the walk is over.
  for (let slot = 200; slot < 260; slot++) index.put(slot, doc(slot, `sprockets sprocketeer${slot}`), false)
  await Promise.resolve()
  expect(index.dirt).toEqual({ count: 0, vacuuming: false })
  expect(index.search('sprocket', () => 1)?.ids.length).toBe(170 + 60)
  expect(index.search('flywheel', () => 1)?.ids.length).toBe(30)
})
