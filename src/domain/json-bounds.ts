/**
 * Free-form JSON objects taken from clients and upstreams (a node's translations, a license object, a video
 * provider's report), bounded before anything serializes them: JSON.stringify recurses, and an object nested 60,000
 * levels deep (360 KB, well under the body limit) overflowed its stack after holding the event loop 1.4 s. The depth
 * is measured without recursion first; only then the serialized size, which is what the store keeps and what a mirror
 * of this registry accepts (domain/upstream-wire.ts).
 */
import * as v from 'valibot'

/** Levels of nesting an object may have, itself the first (translations: language, field, value). */
export const MAX_JSON_DEPTH = 16
/** Characters of JSON a free-form object may take once serialized. */
export const MAX_OBJECT_JSON = 100_000

/**
 * Levels of arrays and objects JSON taken from outside (a request's body, an upstream's reply) may nest before it is
 * parsed: far more than anything the interface holds (a node's translations are free-form to MAX_JSON_DEPTH, two
 * levels down in a body).
 */
export const MAX_TEXT_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Whether JSON, as UTF-8 bytes (whole, or in the parts it came in), nests no deeper than `maxDepth` arrays and
 * objects: one pass over its bytes, before it is parsed. JSON.parse of a 1 MiB body of nested brackets held the event
 * loop 120-330 ms before it failed. Brackets inside strings do not count (a quote or a backslash byte is never part of
 * a longer UTF-8 character); where the text stops being JSON the parser stops too, so it never nests deeper than
 * counted up to there.
 */
export function jsonNestsWithin(json: Uint8Array | readonly Uint8Array[], maxDepth: number): boolean {
  let depth = 0
  let inString = false
  let escaped = false
  for (const bytes of json instanceof Uint8Array ? [json] : json) {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!
      if (inString) {
        if (escaped) escaped = false
        else if (b === BACKSLASH) escaped = true
        else if (b === QUOTE) inString = false
      } else if (b === QUOTE) inString = true
      else if (b === 0x5b || b === 0x7b) {
        if (++depth > maxDepth) return false
      } else if (b === 0x5d || b === 0x7d) depth--
    }
  }
  return true
}

/** Whether `value` nests no deeper than `maxDepth` levels of objects and arrays (a plain value is level 0). */
export function nestsWithin(value: unknown, maxDepth: number): boolean {
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length) {
    const [item, depth] = stack.pop()!
    if (item === null || typeof item !== 'object') continue
    if (depth + 1 > maxDepth) return false
    for (const child of Object.values(item)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
  }
  return true
}

/** Why a free-form object cannot be taken, or undefined when it can. */
export function objectProblem(value: unknown): string | undefined {
  if (!nestsWithin(value, MAX_JSON_DEPTH)) return `nests deeper than ${MAX_JSON_DEPTH} levels`
  if (JSON.stringify(value).length > MAX_OBJECT_JSON) return `is larger than ${MAX_OBJECT_JSON} characters of JSON`
  return undefined
}

/** A free-form JSON object within MAX_JSON_DEPTH and MAX_OBJECT_JSON; `message` when it is not an object at all. */
export function boundedObject(message?: string) {
  return v.pipe(
    v.record(v.string(), v.unknown(), message),
    v.description(`Free-form: nested at most ${MAX_JSON_DEPTH} levels, at most ${MAX_OBJECT_JSON} characters of JSON.`),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return
      const problem = objectProblem(dataset.value)
      if (problem) addIssue({ message: problem })
    }),
  )
}
