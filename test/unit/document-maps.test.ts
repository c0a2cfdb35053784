/**
 * MiniSearch with its maps by document in typed arrays answers as MiniSearch with its own Maps: the same documents
 * with the same scores, bit for bit, through adds, discards, replaces and a vacuum, on the real packs.
 */
import { expect, test } from 'bun:test'
import MiniSearch from 'minisearch'
import { FieldLengths, IntMap, useDocumentMaps } from '../../src/search/document-maps'
import { REAL_NODES } from '../support/seed'

interface Doc {
  id: number
  title: string
  text: string
}

const make = () => new MiniSearch<Doc>({ fields: ['title', 'text'], autoVacuum: false, searchOptions: { prefix: true, fuzzy: 0.2 } })

function docs(round: number): Doc[] {
  return REAL_NODES.slice(0, 400).map((n, i) => ({ id: i * 3, title: `${n.name}${round ? ` r${round}` : ''}`, text: n.description }))
}

const answers = (mini: MiniSearch<Doc>, query: string) => mini.search(query).map(({ id, score }) => [id, score])

test('the typed maps answer as MiniSearch Maps through adds, discards, replaces and a vacuum', async () => {
  const plain = make()
  const typed = make()
  useDocumentMaps(typed)
  const both = (act: (mini: MiniSearch<Doc>) => void) => [plain, typed].forEach(act)
  both((m) => m.addAll(docs(0)))
  const queries = ['image', 'ups', 'lora loader', 'upscal', 'prompt', 'video']
  const same = () => {
    for (const q of queries) expect(answers(typed, q)).toEqual(answers(plain, q))
    expect(typed.documentCount).toBe(plain.documentCount)
  }
  same()
  both((m) =>
    docs(1)
      .filter((d) => d.id % 2 === 0)
      .forEach((d) => m.replace(d)),
  )
  both((m) =>
    docs(0)
      .filter((d) => d.id % 5 === 0 && m.has(d.id))
      .forEach((d) => m.discard(d.id)),
  )
  same()
  expect(typed.has(5 * 3)).toBe(false)
  expect(typed.has(3)).toBe(true)
  await plain.vacuum()
  await typed.vacuum()
  same()
  expect(typed.dirtCount).toBe(0)
})

test('an IntMap is a Map of small integers; field lengths are kept by short id and field', () => {
  const map = new IntMap()
  expect(map.set(0, 7).set(5000, 0).size).toBe(2)
  expect([map.get(0), map.get(5000), map.get(1), map.get(1e9)]).toEqual([7, 0, undefined, undefined])
  expect([...map]).toEqual([
    [0, 7],
    [5000, 0],
  ])
  expect(map.delete(0)).toBe(true)
  expect(map.delete(0)).toBe(false)
  expect([map.has(0), map.size]).toEqual([false, 1])
  expect(() => map.set(-1, 1)).toThrow(RangeError)
  expect(() => map.set(1, 1.5)).toThrow(RangeError)
  const lengths = new FieldLengths(3)
  lengths.setLength(2000, 1, 9)
  expect([...lengths.get(2000)!]).toEqual([0, 9, 0])
  expect([lengths.get(1999), lengths.length(2000, 1), lengths.length(99999, 0)]).toEqual([undefined, 9, 0])
  expect(lengths.delete(2000)).toBe(true)
  expect([lengths.has(2000), lengths.length(2000, 1)]).toEqual([false, 0])
})

test('the maps go in place only before a document is added', () => {
  const mini = make()
  mini.add({ id: 1, title: 'a', text: 'b' })
  expect(() => useDocumentMaps(mini)).toThrow('before any document is added')
})
