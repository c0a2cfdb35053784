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
