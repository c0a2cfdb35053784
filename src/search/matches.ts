/**
 * A query's matching slots in the order it is answered in, counted at once but put in order only as far as its pages
 * ask. A keyword query matching most of the catalogue (a three-letter prefix matches 96,000 nodes at 100,000) spent
 * 30-40 ms sorting its matches by relevance to answer a first page of ten; choosing the best few from all of them is
 * one pass, about 1 ms, and a page further on orders as far as it reaches.
 */

export interface Matches {
  /** How many slots match. */
  readonly total: number
  /** What it holds, in bytes (for the query cache's bound). */
  readonly bytes: number
  /** The slots at positions [from, to) of the order (fewer at its end). */
  slice(from: number, to: number): Int32Array
}

/** Slots already in order (lists without a keyword walk the list order). */
export function inOrder(slots: Int32Array): Matches {
  return { total: slots.length, bytes: slots.byteLength, slice: (from, to) => slots.subarray(from, to) }
}

/** The fewest slots put in order at once: the next pages of a query come from the same pass. */
const FIRST_ORDERED = 64

/**
 * `lead` first, in the order given; then the `hits` by score (highest first), ties by `ranks` (lowest first: the
 * place in list order), then by slot. The hits' arrays are the Matches' own from here on.
 */
export function byScore(lead: Int32Array, hits: { slots: Int32Array; scores: Float64Array; ranks: Int32Array }): Matches {
  const { slots, scores, ranks } = hits
  const count = slots.length
  /** Indexes of hits, the best first: as many as some page asked for so far. */
  let ordered = new Int32Array(0)
  /** Whether hit `a` goes after hit `b`. */
  const after = (a: number, b: number) =>
    scores[a]! < scores[b]! || (scores[a] === scores[b] && (ranks[a]! > ranks[b]! || (ranks[a] === ranks[b] && slots[a]! > slots[b]!)))
  const compare = (a: number, b: number) => (after(a, b) ? 1 : after(b, a) ? -1 : 0)

  /** Puts the best `k` hits in order (all of them when that is most: a heap would cost more than one sort). */
  function orderBest(k: number) {
    if (k * 4 >= count) {
      const all = new Int32Array(count)
      for (let i = 0; i < count; i++) all[i] = i
      ordered = all.sort(compare)
      return
    }
    // A heap of the best k so far, the worst of them at its root: each other hit either leaves or replaces it.
    const heap = new Int32Array(k)
    let size = 0
    for (let i = 0; i < count; i++) {
      if (size < k) {
        let at = size++
        heap[at] = i
        while (at > 0) {
          const parent = (at - 1) >> 1
          if (!after(heap[at]!, heap[parent]!)) break
          swap(heap, at, parent)
          at = parent
        }
      } else if (after(heap[0]!, i)) {
        heap[0] = i
        let at = 0
        for (;;) {
          const left = 2 * at + 1
          const right = left + 1
          let worst = at
          if (left < size && after(heap[left]!, heap[worst]!)) worst = left
          if (right < size && after(heap[right]!, heap[worst]!)) worst = right
          if (worst === at) break
          swap(heap, at, worst)
          at = worst
        }
      }
    }
    ordered = heap.sort(compare)
  }

  return {
    total: lead.length + count,
    // The arrays may be views of longer ones: their buffers are what is held.
    bytes: lead.byteLength + slots.buffer.byteLength + scores.buffer.byteLength + ranks.buffer.byteLength + 4 * count,
    slice(from, to) {
      const end = Math.min(to, lead.length + count)
      const need = end - lead.length
      if (need > ordered.length) orderBest(Math.min(count, Math.max(FIRST_ORDERED, 2 ** Math.ceil(Math.log2(need)))))
      const out = new Int32Array(Math.max(0, end - from))
      for (let i = from; i < end; i++) out[i - from] = i < lead.length ? lead[i]! : slots[ordered[i - lead.length]!]!
      return out
    },
  }
}

function swap(a: Int32Array, i: number, j: number) {
  const t = a[i]!
  a[i] = a[j]!
  a[j] = t
}
