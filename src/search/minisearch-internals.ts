/**
 * The private state of MiniSearch 7.2.0 (pinned in package.json) that the index reads and changes: the scoring
 * (keyword-scorer.ts), the compact postings (postings.ts), the maps by document (document-maps.ts) and the cleanup of
 * discarded documents (vacuum.ts). Said once, so that an upgrade has one place to check;
 * test/unit/keyword-scorer.test.ts and postings.test.ts compare the answers with the library's own.
 */
import type MiniSearch from 'minisearch'
import type { Postings } from './postings'

/** A term's postings in one field (document short id -> term frequency): MiniSearch's Map, or Postings. */
export type FieldPostings = Map<number, number> | Postings
/** A term's postings by field id. */
export type TermData = Map<number, FieldPostings>

export interface MiniSearchInternals {
  /** The term index, a radix tree (`SearchableMap`). */
  _index: Iterable<[string, TermData]> & {
    keys(): Iterable<string>
    get(term: string): TermData | undefined
    delete(term: string): void
    atPrefix(prefix: string): Iterable<[string, TermData]>
    fuzzyGet(term: string, maxDistance: number): Map<string, [TermData, number]>
  }
  _fieldIds: Record<string, number>
  /** The maps by document: MiniSearch's Maps, or the typed ones of document-maps.ts (what of them is used). */
  _fieldLength: Pick<Map<number, ArrayLike<number>>, 'get' | 'has' | 'delete'>
  _avgFieldLength: number[]
  _documentCount: number
  _documentIds: Pick<Map<number, unknown>, 'get' | 'has' | 'delete'>
  _idToShortId: Pick<Map<unknown, number>, 'get' | 'has' | 'delete'>
  _dirtCount: number
  _nextId: number
  removeTerm(fieldId: number, shortId: number, term: string): void
  addFieldLength(shortId: number, fieldId: number, count: number, length: number): void
}

export const internalsOf = (mini: MiniSearch<any>) => mini as unknown as MiniSearchInternals
