/** valibot pieces shared by request schemas: bounded strings and lists that also accept null as "not sent". */
import * as v from 'valibot'

export const str = (max: number) => v.nullish(v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`)))

export const strList = (maxItems: number, maxLength: number) =>
  v.nullish(
    v.pipe(
      v.array(
        v.pipe(v.string('must be a list of strings'), v.maxLength(maxLength, `items must be at most ${maxLength} characters`)),
        'must be a list of strings',
      ),
      v.maxLength(maxItems, `must have at most ${maxItems} items`),
    ),
  )

export const httpUrlOrEmpty = (max: number) =>
  v.nullish(
    v.pipe(
      v.string('must be a string'),
      v.maxLength(max, `must be at most ${max} characters`),
      v.check((s) => s === '' || /^https?:\/\/[^\s]+$/i.test(s), 'must be an http(s) URL'),
    ),
  )

/** Drops null and undefined values, so that "not sent" and "sent as null" mean the same. */
export function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(o).filter(([, val]) => val !== null && val !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], null>
  }
}
