/** Request validation with valibot: JSON bodies and query strings, failing with our 400 {error, message}. */
import type { Context } from 'hono'
import * as v from 'valibot'
import { jsonNestsWithin, MAX_TEXT_DEPTH } from '../domain/json-bounds'
import { arrayForObject, isObject, OBJECT_TYPES, type SchemaParts } from './arrays-for-objects'
import { nulPath } from '../domain/nul'
import { parseTime } from '../domain/timestamps'
import { AppError, unsupportedMediaType } from '../errors'

type Schema = v.GenericSchema<unknown, unknown>

function describe(issue: v.BaseIssue<unknown>, where: string): string {
  const path = v.getDotPath(issue)
  const message = issue.input === undefined ? 'is required' : issue.message
  return `${path ? `${where}${path}` : where.replace(/\.$/, '') || 'request'}: ${message}`
}

/** One line per field in trouble (its first problem); the message is the first line, the details all of them. */
function parseWith<S extends Schema>(schema: S, input: unknown, where: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input)
  if (result.success) return result.output
  const lines = new Map<string, string>()
  for (const issue of result.issues) {
    const path = v.getDotPath(issue) ?? ''
    if (!lines.has(path)) lines.set(path, describe(issue, where))
  }
  const details = [...lines.values()]
  throw new AppError(400, 'bad_request', details[0]!, {}, details)
}

const decoder = new TextDecoder()

/** A 400 about the body, its message its one detail. */
const badBody = (message: string) => new AppError(400, 'bad_request', message, {}, [message])

/**
 * The JSON body (an empty body reads as {}); malformed JSON is a 400, another media type or a compressed body a
 * 415 (unread), a body nested deeper than MAX_TEXT_DEPTH a 400 (unparsed), and a body that is not a JSON object
 * where the schema is one a 400.
 */
export async function jsonBody<S extends Schema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  const coding = c.req.header('content-encoding')?.trim().toLowerCase()
  if (coding && coding !== 'identity') throw unsupportedMediaType(`send the body uncompressed: Content-Encoding ${coding} is not accepted`)
  const bytes = new Uint8Array(await c.req.arrayBuffer())
  const text = decoder.decode(bytes)
  if (!text.trim()) return parseWith(schema, {}, 'body.')
  const type = c.req.header('content-type') ?? ''
  if (type && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw unsupportedMediaType('send the body as JSON with Content-Type: application/json')
  }
  if (!jsonNestsWithin(bytes, MAX_TEXT_DEPTH)) throw badBody(`body: nests deeper than ${MAX_TEXT_DEPTH} levels of arrays and objects`)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new AppError(400, 'invalid_json', 'body: malformed JSON', {}, ['body: malformed JSON'])
  }
  if (OBJECT_TYPES.has(schema.type) && !isObject(parsed)) throw badBody('body: must be a JSON object')
  const arrayAt = arrayForObject(schema as SchemaParts, parsed, 'body')
  if (arrayAt) throw badBody(`${arrayAt}: must be a JSON object, not an array`)
  const nulAt = text.includes('\\u0000') ? nulPath(parsed) : undefined
  if (nulAt !== undefined) throw badBody(`body.${nulAt}: text may not hold a NUL character (\\u0000)`)
  return parseWith(schema, parsed, 'body.')
}

/** The query string as an object: one value as a string, a repeated key as an array. */
export function queryParams<S extends Schema>(c: Context, schema: S): v.InferOutput<S> {
  const raw = c.req.queries()
  const input = Object.fromEntries(Object.entries(raw).map(([k, vals]) => [k, vals.length === 1 ? vals[0] : vals]))
  return parseWith(schema, input, '')
}

/** A single-valued parameter sent more than once counts with its first value (as the upstream reads it). */
const first = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform((x) => (Array.isArray(x) ? (x[0] ?? '') : x)),
)

/** How a query parameter shows in /openapi (the validation pipes above transform, which JSON Schema cannot say). */
export type ParamDoc =
  | { type: 'integer' | 'boolean' | 'string'; minimum?: number; maximum?: number; default?: unknown }
  | { type: 'array'; items: { type: 'string' } }
const doc = <T>(schema: ParamDoc) => v.metadata<T, { openapi: ParamDoc }>({ openapi: schema })

/** Schemas for query values. */
export const q = {
  /** An integer of at least `min`; `fallback` when absent (none: absent stays undefined). */
  int: <F extends number | undefined>(min: number, fallback: F) =>
    v.optional(
      v.pipe(
        first,
        v.regex(/^-?\d+$/, 'must be an integer'),
        v.transform(Number),
        v.number(),
        v.safeInteger('must be an integer below 2^53'),
        v.minValue(min, `must be at least ${min}`),
        doc<number>({ type: 'integer', minimum: min, ...(fallback !== undefined && { default: fallback }) }),
      ),
      (fallback === undefined ? undefined : String(fallback)) as F extends number ? string : undefined,
    ),
  bool: v.optional(
    v.pipe(
      first,
      v.toLowerCase(),
      v.picklist(['true', 'false', '1', '0'], 'must be true or false'),
      v.transform((s) => s === 'true' || s === '1'),
      doc<boolean>({ type: 'boolean' }),
    ),
  ),
  /** A date or date-time (`2026-01-02`, `2026-01-02T03:04:05.678Z`; UTC when it names no zone), given once, as our wire form. */
  time: v.optional(
    v.pipe(
      v.string('must be given once'),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        const time = parseTime(dataset.value)
        if (time === undefined) return (addIssue({ message: 'must be an RFC 3339 date or date-time' }), NEVER)
        return time
      }),
      v.metadata({ openapi: { type: 'string', format: 'date-time' } }),
    ),
  ),
  text: v.optional(v.pipe(first, v.trim(), v.maxLength(500, 'must be at most 500 characters'), doc<string>({ type: 'string' }))),
  many: v.optional(
    v.pipe(
      v.union([v.string(), v.array(v.string())]),
      v.transform((x) => (Array.isArray(x) ? x : [x])),
      doc<string[]>({ type: 'array', items: { type: 'string' } }),
    ),
  ),
}

/** The filters of `GET /nodes/search`: the API and the web search page take the same ones. */
export const SEARCH_FILTERS = {
  search: q.text,
  repository_url_search: q.text,
  host_node_search: q.text,
  comfy_node_search: q.text,
  supported_os: q.text,
  supported_accelerator: q.text,
}
