/** Postings in typed arrays behave as the Maps MiniSearch made, and searches answer the same with them. */
import { expect, test } from 'bun:test'
import { KeywordIndex } from '../../src/search/keyword'
import { Postings } from '../../src/search/postings'
import type { SearchDoc } from '../../src/store/search-docs'
import { searchDoc } from '../support/search-doc'
import { hitsOf } from '../support/hits'

test('Postings answers get, set, delete, size and iteration as a Map does', () => {
  const map = new Map<number, number>([
    [3, 1],
    [7, 2],
    [9, 1],
  ])
  const postings = new Postings(map)
  let seed = 3
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
  for (let i = 0; i < 3000; i++) {
    const id = Math.floor(random() * 200)
    const r = random()
    if (r < 0.5) {
      const freq = 1 + Math.floor(random() * 5)
      map.set(id, freq)
      postings.set(id, freq)
    } else if (r < 0.8) expect(postings.delete(id)).toBe(map.delete(id))
    expect(postings.get(id)).toBe(map.get(id))
    expect(postings.has(id)).toBe(map.has(id))
    expect(postings.size).toBe(map.size)
  }
  const sorted = [...map].sort((a, b) => a[0] - b[0])
  expect([...postings]).toEqual(sorted)
  expect([...postings.keys()]).toEqual(sorted.map(([id]) => id))
  // Deleting while walking (as MiniSearch's vacuum does) visits every entry once.
  const seen: number[] = []
  for (const [id] of postings) {
    seen.push(id)
    postings.delete(id)
  }
  expect(seen).toEqual(sorted.map(([id]) => id))
  expect(postings.size).toBe(0)
})

const WORDS = 'upscale image latent sampler video mask face detailer prompt loader lora control depth pose audio tile'.split(' ')

function doc(i: number, shift = 0): SearchDoc {
  const w = (k: number) => WORDS[(i * 7 + k * 3 + shift) % WORDS.length]!
  return searchDoc({
    id: `Pack${i}-${w(0)}`,
    name: `${w(1)} ${w(2)} pack`,
    description: `${w(3)} ${w(4)} ${w(5)} for ${w(6)} ${w(3)}`,
    author: `author${i % 13}`,
    tags: [w(7)],
    publisherId: `pub${i % 17}`,
    publisherName: `Publisher ${i % 17}`,
  })
}

test('searches give the same slots and scores with compact postings, through adds, replaces, removals and a cleanup', async () => {
  const plain = new KeywordIndex()
  const compact = new KeywordIndex()
  for (let i = 0; i < 600; i++) {
    plain.put(i, doc(i), false)
    compact.put(i, doc(i), false)
    if (i % 100 === 99) compact.compact(true)
  }
  compact.compact(true)
  const queries = ['upscale', 'upsc', 'latent sampler', 'detailr', 'pack', 'publisher 3', 'author7', 'mask face', 'zzz']
  const same = () => {
    for (const q of queries) {
      const a = hitsOf(plain.search(q, () => 1))
      const b = hitsOf(compact.search(q, () => 1))
      expect(b.map((h) => h.slot)).toEqual(a.map((h) => h.slot))
      b.forEach((h, i) => expect(h.score).toBeCloseTo(a[i]!.score, 9))
    }
  }
  same()
  for (let i = 0; i < 600; i += 7) {
    plain.put(i, doc(i, 5), true)
    compact.put(i, doc(i, 5), true)
  }
  for (let i = 3; i < 600; i += 11) {
    plain.remove(i)
    compact.remove(i)
  }
  compact.compact(true)
  same()
  // The cleanup of discarded documents' postings (a tenth were) gives the same on both.
  await plain.cleanUp(async () => {}, 0)
  await compact.cleanUp(async () => {}, 0)
  expect([plain.dirt.count, compact.dirt.count]).toEqual([0, 0])
  same()
})
