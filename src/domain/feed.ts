/**
 * The change feed on the wire (`GET /changes`): each entry is one publisher, node or version at the serial of
 * its latest change, with the entity as a public GET renders it (`upsert`, or `ban` for a banned one, which
 * public lists still show), or a tombstone (`delete`: deleted, or gone). Versions carry their host node names
 * and, when the archive is stored, its SHA-256, so that a downstream mirror can pin it before fetching.
 */
import * as v from 'valibot'
import { isObject } from './fast-check'
import { NodeSchema, PublisherSchema, VersionSchema } from './wire'

export const FEED_KINDS = ['publisher', 'node', 'version'] as const
export const FEED_OPS = ['upsert', 'ban', 'delete'] as const
export const FEED_MAX_LIMIT = 1000

const serial = v.pipe(v.number(), v.safeInteger(), v.minValue(0))
const Sha256 = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'is not a SHA-256'))

const ArchiveRef = v.object({ sha256: Sha256, size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)) })

/** The envelope of an entry; the entity is checked apart (per kind, leniently), so that one bad entity costs only itself. */
const changeEntries = {
  serial,
  kind: v.picklist(FEED_KINDS),
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  op: v.picklist(FEED_OPS),
  host_nodes: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(200))), v.maxLength(100_000))),
  archive: v.optional(ArchiveRef),
}

export const FeedChangeSchema = v.object({ ...changeEntries, entity: v.optional(v.union([PublisherSchema, NodeSchema, VersionSchema])) })

export const FeedPageSchema = v.object({
  /** This registry's id: a new one means the registry was reset, and followers start over. */
  instance: v.string(),
  changes: v.array(FeedChangeSchema),
  /** The `since` that continues after this page. */
  next: serial,
  /** The newest serial when this page was read. */
  head: serial,
})

/** What a follower checks of a page it received. */
export const FeedEnvelopeSchema = v.object({
  instance: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  changes: v.pipe(v.array(v.object({ ...changeEntries, entity: v.optional(v.unknown()) })), v.maxLength(10 * FEED_MAX_LIMIT)),
  next: serial,
  head: serial,
})

const SHA256 = /^[0-9a-f]{64}$/
const isSerial = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0
const isName = (x: unknown, max: number) => typeof x === 'string' && x.length >= 1 && x.length <= max
const isChange = (c: unknown) =>
  isObject(c) &&
  isSerial(c.serial) &&
  FEED_KINDS.includes(c.kind as never) &&
  isName(c.id, 200) &&
  FEED_OPS.includes(c.op as never) &&
  (c.host_nodes === undefined ||
    (Array.isArray(c.host_nodes) &&
      c.host_nodes.length <= 100_000 &&
      c.host_nodes.every((n) => typeof n === 'string' && n.length <= 200))) &&
  (c.archive === undefined ||
    (isObject(c.archive) && typeof c.archive.sha256 === 'string' && SHA256.test(c.archive.sha256) && isSerial(c.archive.size)))

/**
 * `v.safeParse(FeedEnvelopeSchema, page)`, faster: a page whose every entry is plainly as the schema says comes
 * back as it is, without valibot's copy of each entry (see fast-check.ts); any other is left to valibot.
 */
export function parseFeedEnvelope(page: unknown): v.SafeParseResult<typeof FeedEnvelopeSchema> {
  const plain =
    isObject(page) &&
    isName(page.instance, 200) &&
    isSerial(page.next) &&
    isSerial(page.head) &&
    Array.isArray(page.changes) &&
    page.changes.length <= 10 * FEED_MAX_LIMIT &&
    page.changes.every(isChange)
  return plain
    ? ({ typed: true, success: true, output: page, issues: undefined } as unknown as v.SafeParseResult<typeof FeedEnvelopeSchema>)
    : v.safeParse(FeedEnvelopeSchema, page)
}

export type FeedChange = v.InferOutput<typeof FeedChangeSchema>
export type FeedPage = v.InferOutput<typeof FeedPageSchema>
export type FeedEnvelope = v.InferOutput<typeof FeedEnvelopeSchema>
