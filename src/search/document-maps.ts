/**
 * MiniSearch's three maps by document (its short id -> the id it was given, that id -> the short id, and the short
 * id -> the length of each field) in typed arrays instead of Maps. At 100,000 nodes the three Maps held 19.5 MiB of
 * hash tables and 100,000 arrays of field lengths besides (a quarter of the index's heap); here they take 4 bytes an
 * entry and 4 a field. Both kinds of id are small integers: the short ids are MiniSearch's own, counted from 0, and
 * the index gives each node its slot. The objects answer the part of Map that MiniSearch 7.2.0 (pinned) uses on them,
 * so that its own add, discard, search and vacuum run unchanged: test/unit/document-maps.test.ts compares its answers
 * with those of a MiniSearch keeping its own Maps, and test/unit/keyword-scorer.test.ts with the scorer's.
 */
import type MiniSearch from 'minisearch'
import { internalsOf } from './minisearch-internals'
import { grown } from '../typed-arrays'

/** Room for this many keys at first; twice as many each time a key is past the end. */
const FIRST_CAPACITY = 1024

function checkInteger(what: string, n: number): void {
  if (!Number.isInteger(n) || n < 0 || n >= 2 ** 31 - 1) throw new RangeError(`${what} ${n} is not an integer from 0 to 2^31 - 2`)
}

/** A Map from small non-negative integers to non-negative integers, each value at its key's place in an array. */
export class IntMap {
  /** The value plus one at each key (0: none). */
  private values = new Int32Array(FIRST_CAPACITY)
  private count = 0

  get size(): number {
    return this.count
  }

  get(key: number): number | undefined {
    const held = key < this.values.length ? this.values[key]! : 0
    return held ? held - 1 : undefined
  }

  has(key: number): boolean {
    return key < this.values.length && this.values[key]! !== 0
  }

  set(key: number, value: number): this {
    checkInteger('key', key)
    checkInteger('value', value)
    if (key >= this.values.length) this.values = grown(this.values, Math.max(key + 1, 2 * this.values.length))
    if (!this.values[key]) this.count++
    this.values[key] = value + 1
    return this
  }

  delete(key: number): boolean {
    if (!this.has(key)) return false
    this.values[key] = 0
    this.count--
    return true
  }

  *entries(): IterableIterator<[number, number]> {
    for (let key = 0; key < this.values.length; key++) if (this.values[key]) yield [key, this.values[key]! - 1]
  }

  [Symbol.iterator](): IterableIterator<[number, number]> {
    return this.entries()
  }

  *keys(): IterableIterator<number> {
    for (const [key] of this.entries()) yield key
  }
}

/** Each document's field lengths (unique terms a field), by short id: `fields` numbers in a row for each. */
export class FieldLengths {
  private lengths = new Int32Array(0)
  private present = new Uint8Array(0)

  constructor(private readonly fields: number) {}

  /** A document's length in a field (0 when it has none there, or is not held). */
  length(shortId: number, fieldId: number): number {
    return this.lengths[shortId * this.fields + fieldId] ?? 0
  }

  /** As MiniSearch's Map gives them: the lengths of a document held, as an array by field (a view). */
  get(shortId: number): Int32Array | undefined {
    if (!this.has(shortId)) return undefined
    return this.lengths.subarray(shortId * this.fields, (shortId + 1) * this.fields)
  }

  has(shortId: number): boolean {
    return this.present[shortId] === 1
  }

  setLength(shortId: number, fieldId: number, length: number): void {
    checkInteger('short id', shortId)
    if (shortId >= this.present.length) {
      const capacity = Math.max(shortId + 1, 2 * this.present.length, FIRST_CAPACITY)
      this.present = grown(this.present, capacity)
      this.lengths = grown(this.lengths, capacity * this.fields)
    }
    this.present[shortId] = 1
    this.lengths[shortId * this.fields + fieldId] = length
  }

  delete(shortId: number): boolean {
    if (!this.has(shortId)) return false
    this.present[shortId] = 0
    this.lengths.fill(0, shortId * this.fields, (shortId + 1) * this.fields)
    return true
  }
}

/**
 * Puts the typed maps in place of a new MiniSearch's own (before it holds any document). Its `addFieldLength` puts a
 * new array in the Map and then writes into it; here the length is written in place, and the average kept as it does.
 */
export function useDocumentMaps(mini: MiniSearch<any>): { documentIds: IntMap; fieldLengths: FieldLengths } {
  const m = internalsOf(mini)
  if (m._nextId !== 0) throw new Error('the document maps are put in place before any document is added')
  const documentIds = new IntMap()
  const fieldLengths = new FieldLengths(Object.keys(m._fieldIds).length)
  m._documentIds = documentIds
  m._idToShortId = new IntMap()
  m._fieldLength = fieldLengths
  m.addFieldLength = (shortId, fieldId, count, length) => {
    fieldLengths.setLength(shortId, fieldId, length)
    const averageFieldLength = m._avgFieldLength[fieldId] || 0
    const totalFieldLength = averageFieldLength * count + length
    m._avgFieldLength[fieldId] = totalFieldLength / (count + 1)
  }
  return { documentIds, fieldLengths }
}
