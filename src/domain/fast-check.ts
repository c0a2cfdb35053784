/**
 * A fast path in front of valibot for the upstream replies a mirror reads by the thousand: plain fields (text,
 * lists of names, numbers, booleans) are checked in place, without the copy of every object and array that
 * valibot's parse makes (most of a sync's checking time and garbage). Whatever the fast path does not plainly
 * accept goes to valibot, whose verdict and message stand: the fast path only ever accepts what valibot would.
 */
import * as v from 'valibot'

/** True when valibot's schema for the field would accept the value as it is. */
export type FieldCheck = (value: unknown) => boolean

const nullish = (x: unknown) => x === null || x === undefined

/** `nullish(pipe(string(), maxLength(max)))` */
export const isText =
  (max: number): FieldCheck =>
  (x) =>
    nullish(x) || (typeof x === 'string' && x.length <= max)

/** `nullish(pipe(array(pipe(string(), maxLength(max))), maxLength(count)))` */
export const isTexts =
  (max: number, count: number): FieldCheck =>
  (x) =>
    nullish(x) || (Array.isArray(x) && x.length <= count && x.every((s) => typeof s === 'string' && s.length <= max))

/** `nullish(pipe(array(unknown()), maxLength(count)))` */
export const isList =
  (count: number): FieldCheck =>
  (x) =>
    nullish(x) || (Array.isArray(x) && x.length <= count)

/** `nullish(pipe(number(), finite()))` */
export const isNumber: FieldCheck = (x) => nullish(x) || (typeof x === 'number' && Number.isFinite(x))

/** `nullish(boolean())` */
export const isBoolean: FieldCheck = (x) => nullish(x) || typeof x === 'boolean'

export const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)

/**
 * A parser for `v.object(entries)` that checks the fields with a FieldCheck in place; the others (ids with
 * their patterns, transforms, nested objects) go through their own valibot schema, and their output replaces
 * the value. The object itself is returned, unknown keys and all (readers take the keys they know).
 */
export function fastObject<S extends v.ObjectSchema<v.ObjectEntries, undefined>>(
  schema: S,
  plain: Readonly<Record<string, FieldCheck>>,
): (input: unknown) => v.SafeParseResult<S> {
  const fields = Object.entries(schema.entries).map(([key, entry]) => ({
    key,
    check: plain[key],
    entry,
    optional: entry.type === 'nullish' || entry.type === 'optional',
  }))
  const fast = (input: unknown): boolean => {
    if (!isObject(input)) return false
    let outputs: [string, unknown][] | undefined
    for (const f of fields) {
      if (!(f.key in input)) {
        if (f.optional) continue
        return false
      }
      const value = input[f.key]
      if (f.check) {
        if (!f.check(value)) return false
        continue
      }
      const parsed = v.safeParse(f.entry, value)
      if (!parsed.success) return false
      if (parsed.output !== value) (outputs ??= []).push([f.key, parsed.output])
    }
    for (const [key, value] of outputs ?? []) input[key] = value
    return true
  }
  return (input) =>
    fast(input) ? ({ typed: true, success: true, output: input, issues: undefined } as v.SafeParseResult<S>) : v.safeParse(schema, input)
}
