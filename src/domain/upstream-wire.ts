/**
 * What an upstream registry may send, derived from our wire schemas (wire.ts) and loosened: every field may be
 * missing or null (the public registry omits empty pointers), statuses and timestamps are read leniently, and the
 * upstream's spellings are accepted beside ours. Sizes stay bounded: an upstream is not trusted with our memory.
 */
import * as v from 'valibot'
import { NodeSchema, PublisherSchema, VersionSchema } from './wire'

const LONG_TEXT = 100_000
const SHORT_TEXT = 4_000
const LONG_FIELDS = new Set(['description', 'changelog', 'status_reason', 'status_detail'])

const text = (max: number) => v.nullish(v.pipe(v.string(), v.maxLength(max)))
const texts = v.nullish(v.pipe(v.array(v.pipe(v.string(), v.maxLength(SHORT_TEXT))), v.maxLength(10_000)))
const number = v.nullish(v.pipe(v.number(), v.finite()))

/** A name that can stand in a URL path segment and a table key: no slashes, spaces or control characters. */
export const EntityId = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(200),
  v.regex(/^[^/\\\s\u0000-\u001f\u007f]+$/, 'is not a usable id'),
)
const UUID = v.pipe(v.string(), v.regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'is not a UUID'))

/** Each entry of a wire schema, loosened by its type; nested entities are left to the caller. */
function loosen(entries: v.ObjectEntries): v.ObjectEntries {
  const out: v.ObjectEntries = {}
  for (const [key, schema] of Object.entries(entries)) {
    switch (schema.type) {
      case 'string':
      case 'picklist':
        out[key] = text(LONG_FIELDS.has(key) ? LONG_TEXT : SHORT_TEXT)
        break
      case 'array':
        // Lists of names; lists of objects (members) are not mirrored, only bounded.
        out[key] =
          (schema as v.ArraySchema<v.GenericSchema, undefined>).item.type === 'string'
            ? texts
            : v.nullish(v.pipe(v.array(v.unknown()), v.maxLength(10_000)))
        break
      case 'number':
        out[key] = number
        break
      case 'boolean':
        out[key] = v.nullish(v.boolean())
        break
      case 'record':
        out[key] = v.nullish(
          v.pipe(
            v.record(v.string(), v.unknown()),
            v.check((r) => JSON.stringify(r).length <= LONG_TEXT, 'is too large'),
          ),
        )
        break
    }
  }
  return out
}

export const UpstreamPublisherSchema = v.object({ ...loosen(PublisherSchema.entries), id: EntityId })

export const UpstreamVersionSchema = v.object({
  ...loosen(VersionSchema.entries),
  id: UUID,
  version: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100)),
})

export const UpstreamNodeSchema = v.object({
  ...loosen(NodeSchema.entries),
  id: EntityId,
  publisher: v.nullish(v.looseObject({})),
  latest_version: v.nullish(v.looseObject({})),
})

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
