/** A keyword index's answer as a list of { slot, score } (in the order answered), for comparisons in tests. */
import type { Scored } from '../../src/search/keyword-scorer'

export const hitsOf = (scored: Scored | undefined) => Array.from(scored?.ids ?? [], (slot, i) => ({ slot, score: scored!.scores[i]! }))
