/**
 * The change feed on the wire (`GET /changes`): each entry is one publisher, node or version at the serial of
 * its latest change, with the entity as a public GET renders it (`upsert`, or `ban` for a banned one, which
 * public lists still show), or a tombstone (`delete`: deleted, or gone). Versions carry their host node names
 * and, when the archive is stored, its SHA-256, so that a downstream mirror can pin it before fetching.
 */
import * as v from 'valibot'
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

export type FeedChange = v.InferOutput<typeof FeedChangeSchema>
export type FeedPage = v.InferOutput<typeof FeedPageSchema>
export type FeedEnvelope = v.InferOutput<typeof FeedEnvelopeSchema>
