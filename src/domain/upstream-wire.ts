/**
 * What an upstream registry may send, derived from our wire schemas (wire.ts) and loosened: every field may be
 * missing or null (the public registry omits empty pointers), statuses and timestamps are read leniently, and the
 * upstream's spellings are accepted beside ours. Sizes stay bounded: an upstream is not trusted with our memory.
 */
import * as v from 'valibot'
import { boundedObject } from './json-bounds'
import { fastObject, isBoolean, isList, isNumber, isText, isTexts, type FieldCheck } from './fast-check'
import { NodeSchema, PublisherSchema, VersionSchema } from './wire'

const LONG_TEXT = 100_000
const SHORT_TEXT = 4_000
const LONG_FIELDS = new Set(['description', 'changelog', 'status_reason', 'status_detail'])

const text = (max: number) => v.nullish(v.pipe(v.string(), v.maxLength(max)))
const texts = v.nullish(v.pipe(v.array(v.pipe(v.string(), v.maxLength(SHORT_TEXT))), v.maxLength(10_000)))
const number = v.nullish(v.pipe(v.number(), v.finite()))

// `.` and `..` are refused too: as path segments, URLs normalise them away (`/nodes/./versions` is `/nodes/versions`).
const USABLE_ID = /^(?!\.\.?$)[^/\\\s\u0000-\u001f\u007f]+$/
const DOT_SEGMENT = /^\.\.?$/
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A name that can stand in a URL path segment and a table key: no slashes, spaces, control characters or dot segments. */
export const EntityId = v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.regex(USABLE_ID, 'is not a usable id'))
const UUID = v.pipe(v.string(), v.regex(UUID_TEXT, 'is not a UUID'))
const VersionText = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1),
  v.maxLength(100),
  v.check((x) => !DOT_SEGMENT.test(x), 'is a dot segment'),
)

// The same rules as in-place checks (the version only when it needs no trimming: else valibot trims it).
const isEntityId: FieldCheck = (x) => typeof x === 'string' && x.length >= 1 && x.length <= 200 && USABLE_ID.test(x)
const isUuid: FieldCheck = (x) => typeof x === 'string' && UUID_TEXT.test(x)
const isVersionText: FieldCheck = (x) => typeof x === 'string' && x.length >= 1 && x.length <= 100 && x.trim() === x && !DOT_SEGMENT.test(x)

/**
 * Each entry of a wire schema, loosened by its type (nested entities are left to the caller), and beside it the
 * same rule as an in-place check (records have none: valibot checks them).
 */
function loosen(entries: v.ObjectEntries): { entries: v.ObjectEntries; plain: Record<string, FieldCheck> } {
  const out: v.ObjectEntries = {}
  const plain: Record<string, FieldCheck> = {}
  for (const [key, schema] of Object.entries(entries)) {
    switch (schema.type) {
      case 'string':
      case 'picklist': {
        const max = LONG_FIELDS.has(key) ? LONG_TEXT : SHORT_TEXT
        out[key] = text(max)
        plain[key] = isText(max)
        break
      }
      case 'array':
        // Lists of names; lists of objects (members) are not mirrored, only bounded.
        if ((schema as v.ArraySchema<v.GenericSchema, undefined>).item.type === 'string') {
          out[key] = texts
          plain[key] = isTexts(SHORT_TEXT, 10_000)
        } else {
          out[key] = v.nullish(v.pipe(v.array(v.unknown()), v.maxLength(10_000)))
          plain[key] = isList(10_000)
        }
        break
      case 'number':
        out[key] = number
        plain[key] = isNumber
        break
      case 'boolean':
        out[key] = v.nullish(v.boolean())
        plain[key] = isBoolean
        break
      case 'record':
        out[key] = v.nullish(boundedObject())
        break
    }
  }
  return { entries: out, plain }
}

const publisher = loosen(PublisherSchema.entries)
export const UpstreamPublisherSchema = v.object({ ...publisher.entries, id: EntityId })

const version = loosen(VersionSchema.entries)
export const UpstreamVersionSchema = v.object({
  ...version.entries,
  id: UUID,
  version: VersionText,
})

const node = loosen(NodeSchema.entries)
export const UpstreamNodeSchema = v.object({
  ...node.entries,
  id: EntityId,
  publisher: v.nullish(v.looseObject({})),
  latest_version: v.nullish(v.looseObject({})),
})

/**
 * `v.safeParse` of these schemas, faster (see fast-check.ts): a valid entity comes back as it is rather than
 * copied (unknown keys and all: readers take the keys they know), an invalid one with valibot's issues.
 */
export const parseUpstreamPublisher = fastObject(UpstreamPublisherSchema, { ...publisher.plain, id: isEntityId })
export const parseUpstreamVersion = fastObject(UpstreamVersionSchema, { ...version.plain, id: isUuid, version: isVersionText })
export const parseUpstreamNode = fastObject(UpstreamNodeSchema, {
  ...withoutKeys(node.plain, ['publisher', 'latest_version']),
  id: isEntityId,
})

function withoutKeys(plain: Record<string, FieldCheck>, keys: string[]): Record<string, FieldCheck> {
  const out = { ...plain }
  for (const k of keys) delete out[k]
  return out
}

/** A page of `GET /nodes`; its items are checked one by one, so that one bad node does not cost the page. */
export const UpstreamNodePageSchema = v.object({
  nodes: v.pipe(v.array(v.unknown()), v.maxLength(10_000)),
  total: v.pipe(v.number(), v.integer(), v.minValue(0)),
  page: v.nullish(v.number()),
  limit: v.nullish(v.number()),
  totalPages: v.nullish(v.number()),
})

export const UpstreamVersionListSchema = v.pipe(v.array(v.unknown()), v.maxLength(100_000))

/** `GET /nodes/{id}/versions/{version}/comfy-nodes`, the upstream's host node names of a version. */
export const UpstreamHostNodePageSchema = v.object({
  comfy_nodes: v.nullish(
    v.pipe(v.array(v.looseObject({ comfy_node_name: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) })), v.maxLength(100_000)),
  ),
  totalNumberOfPages: v.nullish(v.number()),
})

/** A validated upstream object: its loosened fields hold a string, a number, a boolean, a list of strings or null. */
export type Loose = { readonly [key: string]: unknown }
export type UpstreamPublisher = Loose & { id: string }
export type UpstreamVersion = Loose & { id: string; version: string }
export type UpstreamNode = Loose & { id: string; publisher?: Loose | null }
