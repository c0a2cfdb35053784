/**
 * Arrays sent where a body has an object: valibot's objects and records take arrays, whose fields read as absent (a
 * publish's `node: [1, 2]` was taken as a node with no fields, translations `["a"]` stored as `{"0": "a"}`), so the
 * body is walked along its schema before valibot reads it.
 */

/** Schemas of a JSON object. */
export const OBJECT_TYPES = new Set(['object', 'loose_object', 'strict_object', 'object_with_rest', 'record'])
/** Schemas that take whatever is given to the one they wrap, and those that take an array as it is. */
const WRAPPER_TYPES = new Set([
  'optional',
  'nullable',
  'nullish',
  'exact_optional',
  'undefinedable',
  'non_optional',
  'non_nullable',
  'non_nullish',
])
const TAKE_ARRAYS = new Set(['array', 'tuple', 'loose_tuple', 'strict_tuple', 'tuple_with_rest', 'unknown', 'any'])

/** What the walk reads of a valibot schema. */
export interface SchemaParts {
  type: string
  wrapped?: SchemaParts
  entries?: Record<string, SchemaParts>
  value?: SchemaParts
  item?: SchemaParts
  options?: SchemaParts[]
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const unwrapped = (schema: SchemaParts): SchemaParts =>
  WRAPPER_TYPES.has(schema.type) && schema.wrapped ? unwrapped(schema.wrapped) : schema

/**
 * Where an array stands in `input` in place of an object that `schema` wants, as a dot path after `where`; undefined
 * when nowhere. Walks the input only where the schema describes it (a body nests at most MAX_TEXT_DEPTH levels, so
 * the recursion is bounded).
 */
export function arrayForObject(wrapped: SchemaParts, input: unknown, where: string): string | undefined {
  const schema = unwrapped(wrapped)
  if (schema.type === 'union' && Array.isArray(input)) {
    const options = (schema.options ?? []).map(unwrapped)
    return !options.some((o) => TAKE_ARRAYS.has(o.type)) && options.some((o) => OBJECT_TYPES.has(o.type)) ? where : undefined
  }
  if (OBJECT_TYPES.has(schema.type)) {
    if (Array.isArray(input)) return where
    if (!isObject(input)) return undefined
    const fields = schema.entries ? Object.entries(schema.entries) : []
    for (const [key, field] of fields) {
      const found = key in input ? arrayForObject(field, input[key], `${where}.${key}`) : undefined
      if (found) return found
    }
    if (schema.type === 'record' && schema.value)
      for (const [key, value] of Object.entries(input)) {
        const found = arrayForObject(schema.value, value, `${where}.${key}`)
        if (found) return found
      }
    return undefined
  }
  if (schema.type === 'array' && schema.item && Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      const found = arrayForObject(schema.item, input[i], `${where}.${i}`)
      if (found) return found
    }
  }
  return undefined
}
