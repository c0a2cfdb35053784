/**
 * MiniSearch's scoring of a query, computed over its term index into reused typed arrays instead of an object per
 * matching document and term: BM25+ per field times the field's boost, prefix and fuzzy expansions weighted by their
 * distance, the query's terms combined with AND, the sum times the number of distinct terms. The answers are
 * MiniSearch's own to the last bit (the same products and sums in the same order); the postings of documents
 * discarded since they were indexed are cleaned up, whole, before the term is scored, so the answers are those
 * MiniSearch gives once they are gone; test/unit/keyword-scorer.test.ts compares every slot and score. At 100,000
 * nodes a word of a few thousand matches cost MiniSearch's search a millisecond and more in objects and Maps. Reads
 * fields of the pinned MiniSearch 7.2.0, as postings.ts does.
 */
import type MiniSearch from 'minisearch'
import { internalsOf, type FieldPostings, type MiniSearchInternals, type TermData } from './minisearch-internals'
import { Postings } from './postings'
import { FuzzyMemo } from './fuzzy-memo'
import { grown } from '../typed-arrays'
import type { FieldLengths, IntMap } from './document-maps'

/** The search options the index was made with (MiniSearch's names and meanings). */
export interface ScoringOptions {
  /** The searched fields, in the index's order, and their boosts (1 when not given). */
  fields: readonly string[]
  boost: Record<string, number>
  prefix: (term: string) => boolean
  weights: { prefix: number; fuzzy: number }
  bm25: { k: number; b: number; d: number }
}

/** Fuzzy matching: MiniSearch's `fuzzy` (a distance, or a fraction of the term's length) and `maxFuzzy`. */
export interface FuzzyOptions {
  fuzzy: (term: string) => number | false
  maxFuzzy: number
}

/** Matching documents, index by index: their ids as given to MiniSearch (numbers) and their scores. */
export interface Scored {
  ids: Int32Array
  scores: Float64Array
}

/** Above this, the marks restart from zero (a server answers billions of searches in a long life). */
const MAX_MARK = 2 ** 30

/**
 * Postings (a matching document in one field) a search reads before it takes no further word: the rest are ignored,
 * as words past the 32nd are. Each word reads all its postings whatever the words before it kept, so 32 typos of a
 * word in nearly every pack held the event loop for 0.2-0.3 s at 100,000 nodes. The whole index of the real
 * registry's 2,200 packs is some 50,000 postings; at 100,000 nodes this is two or three of the commonest words.
 */
export const MAX_POSTINGS_READ = 250_000

export class KeywordScorer {
  private readonly m: MiniSearchInternals
  private readonly fields: { id: number; boost: number }[]
  /** Sum of the terms scored so far per document, and the mark of the step that set it. */
  private total = new Float64Array(0)
  private totalMark = new Int32Array(0)
  /** The current term's score per document, and the mark of the term that set it. */
  private term = new Float64Array(0)
  private termMark = new Int32Array(0)
  private mark = 0
  /**
   * Typo expansions remembered. Emptied whenever a term comes into the tree (termsChanged) or leaves it: leaving, a
   * term merges its sibling into its parent at the end of the parent's children, which changes the order a walk finds
   * terms in, and with it the order scores are summed.
   */
  private readonly fuzzyMemo = new FuzzyMemo()
  /** Postings of discarded documents this scorer has cleaned up (each changes later scores of the term). */
  private cleaned = 0
  /** Postings the current (or last) search read. */
  private read = 0

  /** `maps`: the index's maps by document, in typed arrays (document-maps.ts). */
  constructor(
    mini: MiniSearch<any>,
    private readonly maps: { documentIds: IntMap; fieldLengths: FieldLengths },
    private readonly options: ScoringOptions,
    private readonly maxPostingsRead = MAX_POSTINGS_READ,
  ) {
    this.m = internalsOf(mini)
    this.fields = options.fields.map((name) => ({ id: this.m._fieldIds[name]!, boost: options.boost[name] || 1 }))
    // Terms leave the tree in MiniSearch's own code (a search's cleanup) and in the index's (vacuum.ts): heard here.
    const index = this.m._index
    const deleteTerm = index.delete.bind(index)
    index.delete = (term) => {
      this.fuzzyMemo.clear()
      deleteTerm(term)
    }
  }

  /** Documents were added, replaced or removed: their terms may be new. */
  termsChanged(): void {
    this.fuzzyMemo.clear()
  }

  /** Postings the last search read (tests read it). */
  get postingsRead(): number {
    return this.read
  }

  /**
   * Matching documents' ids (as given to MiniSearch) with MiniSearch's scores, in no particular order: those of the
   * words scored before `maxPostingsRead` postings were read (at least the first word), as if the query ended there.
   */
  search(terms: readonly string[], fuzzy?: FuzzyOptions): Scored {
    this.read = 0
    if (!terms.length) return { ids: new Int32Array(0), scores: new Float64Array(0) }
    this.reserve(this.m._nextId)
    // Marks restart from zero between searches, never within one (a search takes two for each term).
    if (this.mark + 2 * terms.length >= MAX_MARK) {
      this.totalMark.fill(0)
      this.termMark.fill(0)
      this.mark = 0
    }
    // With nothing discarded since the last vacuum, every posting is a live document's: a term after the matches ran
    // out can be skipped, as it changes nothing.
    const clean = this.m._dirtCount === 0
    // A word given again is scored once (a query of one word a hundred times took 0.6 s): its scores are the same
    // each time, and its later documents are among its first ones, AND having only narrowed them since. Unless
    // postings of discarded documents were cleaned up meanwhile: that changes document frequencies and the tree.
    const repeated = new Set(terms.filter((t, i) => terms.indexOf(t) !== i))
    const scoredBefore = new Map<string, { docs: number[]; scores: number[]; cleaned: number }>()
    let totalMark = 0
    let matched: number[] = []
    let scored = 0
    for (let i = 0; i < terms.length; i++) {
      if (i > 0 && clean && !matched.length) break
      if (i > 0 && this.read >= this.maxPostingsRead) break
      scored = i + 1
      const term = terms[i]!
      const termMark = this.nextMark()
      const within = i === 0 ? 0 : totalMark
      const before = scoredBefore.get(term)
      let touched: number[]
      if (before && before.cleaned === this.cleaned) {
        this.read += before.docs.length
        touched = []
        before.docs.forEach((doc, k) => {
          if (this.totalMark[doc] !== within) return
          this.term[doc] = before.scores[k]!
          touched.push(doc)
        })
      } else {
        const cleanedBefore = this.cleaned
        touched = this.scoreTerm(term, fuzzy, termMark, within)
        if (repeated.has(term) && this.cleaned === cleanedBefore) {
          scoredBefore.set(term, { docs: touched, scores: touched.map((doc) => this.term[doc]!), cleaned: this.cleaned })
        }
      }
      const nextTotalMark = this.nextMark()
      for (const doc of touched) {
        // AND: the term's documents were kept to those every earlier term matched.
        this.total[doc] = i === 0 ? this.term[doc]! : this.total[doc]! + this.term[doc]!
        this.totalMark[doc] = nextTotalMark
      }
      totalMark = nextTotalMark
      matched = touched
    }
    const quality = new Set(terms.slice(0, scored)).size
    const ids = new Int32Array(matched.length)
    const scores = new Float64Array(matched.length)
    for (let i = 0; i < matched.length; i++) {
      const doc = matched[i]!
      ids[i] = this.maps.documentIds.get(doc)!
      scores[i] = this.total[doc]! * quality
    }
    return { ids, scores }
  }

  /**
   * One query term: the exact term, its prefix expansions, its fuzzy ones (MiniSearch's executeQuerySpec).
   * `within`: the mark of the documents earlier terms matched (0: all). Returns the documents it scored.
   */
  private scoreTerm(term: string, fuzzy: FuzzyOptions | undefined, mark: number, within: number): number[] {
    const index = this.m._index
    const touched: number[] = []
    this.scoreDerived(term, 1, index.get(term), mark, within, touched)
    const prefixMatches = this.options.prefix(term) ? index.atPrefix(term) : undefined
    let fuzzyMatches: Map<string, [TermData, number]> | undefined
    const fuzziness = fuzzy?.fuzzy(term)
    if (fuzzy && fuzziness !== false && fuzziness !== undefined) {
      const maxDistance = fuzziness < 1 ? Math.min(fuzzy.maxFuzzy, Math.round(term.length * fuzziness)) : fuzziness
      if (maxDistance) fuzzyMatches = this.fuzzyGet(term, maxDistance)
    }
    const { prefix: prefixWeight, fuzzy: fuzzyWeight } = this.options.weights
    if (prefixMatches) {
      for (const [derived, data] of prefixMatches) {
        const distance = derived.length - term.length
        if (!distance) continue
        fuzzyMatches?.delete(derived)
        this.scoreDerived(derived, (prefixWeight * derived.length) / (derived.length + 0.3 * distance), data, mark, within, touched)
      }
    }
    if (fuzzyMatches) {
      for (const derived of fuzzyMatches.keys()) {
        const [data, distance] = fuzzyMatches.get(derived)!
        if (!distance) continue
        this.scoreDerived(derived, (fuzzyWeight * derived.length) / (derived.length + distance), data, mark, within, touched)
      }
    }
    return touched
  }

  /** One term of the index found for a query term (MiniSearch's termResults), added to the term's scores. */
  private scoreDerived(derived: string, weight: number, data: TermData | undefined, mark: number, within: number, touched: number[]) {
    if (!data) return
    const m = this.m
    const { k, b, d } = this.options.bm25
    const documentCount = m._documentCount
    const clean = m._dirtCount === 0
    const { fieldLengths } = this.maps
    for (const field of this.fields) {
      const postings = data.get(field.id)
      if (!postings) continue
      let { ids, freqs } = liveArrays(postings)
      if (!clean) {
        // Discarded documents' postings go first, whole, so that every document is scored with the frequency of the
        // term among the documents left, as in an index that never held them. MiniSearch counts them down as it
        // meets them (the documents before one were scored as if it were there) and takes one occurrence of the
        // term a search (a posting of a word said twice was met again by the next search): such answers, kept by
        // the caches, differed from a restarted server's.
        let removed = 0
        for (let i = 0; i < ids.length; i++) {
          const doc = ids[i]!
          if (this.maps.documentIds.has(doc)) continue
          for (let n = freqs[i]!; n > 0; n--) m.removeTerm(field.id, doc, derived)
          removed++
        }
        this.cleaned += removed
        if (removed) {
          // The postings left, read again (from the term: MiniSearch drops a field's postings without emptying them
          // when their last one goes), so that the scoring below asks nothing of each document.
          const left = data.get(field.id)
          if (!left) continue
          ;({ ids, freqs } = liveArrays(left))
        }
      }
      const matching = ids.length
      this.read += matching
      const invDocFreq = Math.log(1 + (documentCount - matching + 0.5) / (matching + 0.5))
      const avgFieldLength = m._avgFieldLength[field.id]!
      const weightedBoost = weight * field.boost
      for (let i = 0; i < ids.length; i++) {
        const doc = ids[i]!
        if (within && this.totalMark[doc] !== within) continue
        const termFreq = freqs[i]!
        const fieldLength = fieldLengths.length(doc, field.id)
        const raw = invDocFreq * (d + (termFreq * (k + 1)) / (termFreq + k * (1 - b + (b * fieldLength) / avgFieldLength)))
        const weighted = weightedBoost * raw
        if (this.termMark[doc] === mark) this.term[doc] = this.term[doc]! + weighted
        else {
          this.term[doc] = weighted
          this.termMark[doc] = mark
          touched.push(doc)
        }
      }
    }
  }

  /** MiniSearch's fuzzyGet, through the remembered expansions. */
  private fuzzyGet(term: string, maxDistance: number): Map<string, [TermData, number]> {
    const index = this.m._index
    const expansions = this.fuzzyMemo.get(term, maxDistance, () =>
      [...index.fuzzyGet(term, maxDistance)].map(([derived, [, distance]]) => [derived, distance] as const),
    )
    const found = new Map<string, [TermData, number]>()
    for (const [derived, distance] of expansions) {
      const data = index.get(derived)
      if (data) found.set(derived, [data, distance])
    }
    return found
  }

  private nextMark(): number {
    return ++this.mark
  }

  private reserve(size: number) {
    if (size <= this.total.length) return
    const capacity = Math.ceil(size * 1.25) + 16
    this.total = grown(this.total, capacity)
    this.totalMark = grown(this.totalMark, capacity)
    this.term = grown(this.term, capacity)
    this.termMark = grown(this.termMark, capacity)
  }
}

/**
 * Postings as arrays: compact ones' copies, and a Map's in its order (the postings of documents added since the last
 * compaction).
 */
const liveArrays = (postings: FieldPostings) => (postings instanceof Postings ? postings.live() : mapArrays(postings))

/** A Map's postings as arrays, in its order. */
function mapArrays(postings: Map<number, number>): { ids: number[]; freqs: number[] } {
  return { ids: [...postings.keys()], freqs: [...postings.values()] }
}
