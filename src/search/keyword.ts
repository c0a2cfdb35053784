/** Keyword relevance with MiniSearch: which fields are searched, how text is cut into terms, how queries expand. */
import MiniSearch from 'minisearch'
import type { SearchDoc } from '../store/search-docs'
import { KeywordScorer, MAX_POSTINGS_READ, type Scored } from './keyword-scorer'
import { compactPostings } from './postings'
import { internalsOf } from './minisearch-internals'
import { vacuumInSlices } from './vacuum'
import { useDocumentMaps } from './document-maps'

interface KeywordDoc {
  slot: number
  title: string
  tags: string
  people: string
  description: string
}

// Words too common to tell packs apart: English ones, and the registry's own (94% of packs say "comfyui").
// Dropped when indexing and from queries; a query of nothing else constrains nothing.
const STOP_WORDS = new Set([
  ...'a an and are as at be by for from has have in is it its of on or that the this to was were will with you your can which these those using use used into also'.split(
    ' ',
  ),
  ...'comfyui comfy node nodes custom https http www com github'.split(' '),
])

/**
 * Words of a query searched at most: each costs a pass over its postings, and a 500-character query of one short
 * word repeated held the event loop for 0.6 s at 100,000 nodes. No real search has this many; the rest are ignored.
 */
export const MAX_QUERY_WORDS = 32

/** Splits on anything but letters and digits (so `ComfyUI_IPAdapter-plus` gives three words). */
const words = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)

/**
 * A word's term: its first 40 characters, in the index and in queries alike, so that a longer word (a class name, a
 * hash) is found by itself and by its start, and a pasted megabyte of one word costs no more than 40 characters.
 */
const MAX_TERM_LENGTH = 40
const term = (word: string) => (word.length > MAX_TERM_LENGTH ? word.slice(0, MAX_TERM_LENGTH) : word)

const tokenize = (text: string) => words(text).map(term)

const CAMEL_BOUNDARY = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u

/** Titles also yield the parts of CamelCase words: `UltimateSDUpscale` adds `Ultimate`, `SD`, `Upscale`. */
function tokenizeField(text: string, field?: string): string[] {
  const whole = words(text)
  const tokens = whole.map(term)
  if (field !== 'title') return tokens
  const parts = whole.flatMap((w) => {
    const split = w.split(CAMEL_BOUNDARY)
    return split.length > 1 ? split.map(term) : []
  })
  return parts.length ? tokens.concat(parts) : tokens
}

function processTerm(term: string): string | null {
  const lower = term.toLowerCase()
  return STOP_WORDS.has(lower) ? null : lower
}

const FIELDS = ['title', 'tags', 'people', 'description']

/** MiniSearch's search options; KeywordScorer computes the same scores from them. */
const SEARCH_OPTIONS = {
  boost: { title: 4, tags: 2, people: 1.5, description: 1 },
  combineWith: 'AND' as const,
  // Prefixes from 3 characters: shorter ones expand to thousands of terms and tell nothing apart.
  prefix: (term: string) => term.length >= 3,
  weights: { prefix: 0.5, fuzzy: 0.3 },
  // MiniSearch's default BM25+ parameters, stated so that both computations read them from here.
  bm25: { k: 1.2, b: 0.7, d: 0.5 },
}

/** One typo is tolerated in words of 5 or more characters. */
const FUZZY = { fuzzy: (term: string) => (term.length >= 5 ? 1 : false), maxFuzzy: 1 }

/**
 * Typo tolerance is for queries that find little as typed: a word that matches many packs exactly is
 * not a typo, and expanding it by edit distance would only add noise (and cost).
 */
const FEW_RESULTS = 20

const searchedText = (d: SearchDoc): Omit<KeywordDoc, 'slot'> => ({
  title: `${d.id} ${d.name}`,
  tags: d.tags.join(' '),
  people: `${d.author} ${d.publisherId} ${d.publisherName}`,
  description: d.description,
})

export function textKey(d: SearchDoc): string {
  const t = searchedText(d)
  return `${t.title}\u0000${t.tags}\u0000${t.people}\u0000${t.description}`
}

/** When discarded documents' postings are cleaned up: MiniSearch's own defaults for its automatic vacuum. */
const VACUUM_MIN_DIRT = 20
const VACUUM_MIN_DIRT_FACTOR = 0.1

export class KeywordIndex {
  private readonly mini = new MiniSearch<KeywordDoc>({
    idField: 'slot',
    fields: FIELDS,
    storeFields: [],
    tokenize: tokenizeField,
    processTerm,
    searchOptions: { ...SEARCH_OPTIONS, tokenize, processTerm },
    // Its own vacuum can end the process (vacuum.ts, seen after a publisher of 1,200 nodes was renamed): cleanUp()
    // does that work instead, when the same conditions are met.
    autoVacuum: false,
  })

  private readonly scorer: KeywordScorer

  /** `maxPostingsRead`: what one pass of a search reads at most before it takes no further word (tests lower it). */
  constructor(opts: { maxPostingsRead?: number } = {}) {
    const maps = useDocumentMaps(this.mini)
    this.scorer = new KeywordScorer(this.mini, maps, { ...SEARCH_OPTIONS, fields: FIELDS }, opts.maxPostingsRead ?? MAX_POSTINGS_READ)
  }

  /** Documents added since the postings were last made compact. */
  private loose = 0

  put(slot: number, doc: SearchDoc, replace: boolean): void {
    const indexed = { slot, ...searchedText(doc) }
    if (replace && this.mini.has(slot)) this.mini.replace(indexed)
    else this.mini.add(indexed)
    this.scorer.termsChanged()
    this.loose++
  }

  /**
   * Turns the postings MiniSearch made since the last call into typed arrays (postings.ts). A walk of every term
   * (some thousands, a few milliseconds): unless `now`, only once 1,000 documents were added since the last one, so
   * that single writes do not pay it; Maps and compact postings answer alike meanwhile. Reaches into MiniSearch's
   * term index (`_index`, a field of the pinned 7.2.0): test/unit/postings.test.ts checks that answers stay the same.
   */
  compact(now = false): void {
    if (!this.loose || (!now && this.loose < 1000)) return
    compactPostings(internalsOf(this.mini)._index)
    this.loose = 0
  }

  /** Whether a tenth of the documents were discarded or replaced since their postings were last cleaned up. */
  get needsCleanUp(): boolean {
    return !this.cleaning && this.mini.dirtCount >= VACUUM_MIN_DIRT && this.mini.dirtFactor >= VACUUM_MIN_DIRT_FACTOR
  }

  private cleaning = false

  /**
   * Cleans up the postings of discarded documents, `sliceMs` at a time with `pause()` between (vacuum.ts), until
   * done or `stopped()`; one cleanup at a time.
   */
  async cleanUp(pause: () => Promise<unknown>, sliceMs: number, stopped?: () => boolean): Promise<void> {
    if (!this.needsCleanUp) return
    this.cleaning = true
    try {
      await vacuumInSlices(internalsOf(this.mini), pause, sliceMs, stopped)
    } finally {
      this.cleaning = false
    }
  }

  /** For tests: documents discarded or replaced whose postings are not cleaned up yet, and whether a cleanup runs. */
  get dirt(): { count: number; cleaning: boolean } {
    return { count: this.mini.dirtCount, cleaning: this.cleaning }
  }

  remove(slot: number): void {
    if (this.mini.has(slot)) this.mini.discard(slot)
    this.scorer.termsChanged()
  }

  /**
   * Matching slots (`ids`) with their relevance scores, times `boost` of each document (popularity; a per-document
   * factor, so applying it to the sum equals applying it to every term). Undefined when the text has no
   * searchable word (only stop words): it matches everything.
   */
  search(text: string, boost: (slot: number) => number): Scored | undefined {
    const terms = tokenize(text)
      .flatMap((t) => processTerm(t) ?? [])
      .slice(0, MAX_QUERY_WORDS)
    if (!terms.length) return undefined
    let results = this.scorer.search(terms)
    if (results.ids.length < FEW_RESULTS) results = this.scorer.search(terms, FUZZY)
    const { ids, scores } = results
    for (let i = 0; i < ids.length; i++) scores[i] = scores[i]! * boost(ids[i]!)
    return results
  }

  get documentCount(): number {
    return this.mini.documentCount
  }

  /** Postings the last pass of the last search read (tests read it). */
  get postingsRead(): number {
    return this.scorer.postingsRead
  }
}
