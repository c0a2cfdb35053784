/** Reads another registry-mirror's change feed: pages validated, each entity checked apart and turned into mirror items. */
import * as v from 'valibot'
import { FEED_MAX_LIMIT, FeedEnvelopeSchema, parseFeedEnvelope, type FeedEnvelope } from '../domain/feed'
import { nodeItem, publisherItem, versionItem, type ItemProblem, type MirrorItem } from '../domain/mirror-items'
import {
  parseUpstreamNode,
  parseUpstreamPublisher,
  parseUpstreamVersion,
  type UpstreamNode,
  type UpstreamPublisher,
  type UpstreamVersion,
} from '../domain/upstream-wire'
import { ARCHIVE_PREFIX } from '../domain/urls'
import { invalidReply, type UpstreamHttp } from './http-client'

export interface FeedPageItems {
  instance: string
  next: number
  head: number
  /** Items in serial order, each with its serial. */
  items: { serial: number; item: MirrorItem }[]
  problems: (ItemProblem & { serial: number })[]
}

const issue = (r: { issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]] }) =>
  `${v.getDotPath(r.issues[0]) ?? 'entity'}: ${r.issues[0].message}`

/**
 * An archive's address through `base`, the address this registry reads the upstream at: the upstream hands out
 * addresses made from its own --public-url, which need not be reachable from here (one serving on 0.0.0.0 without
 * it hands out http://0.0.0.0:8080/...; one behind a proxy, the proxy's). Only an address of the archive route
 * (`/archives/PUBLISHER/NODE/VERSION/node.zip`, after any prefix) is taken through `base`; any other is kept.
 */
export function archiveUrlThrough(url: string, base: string): string {
  const parsed = URL.parse(url)
  if (!parsed) return url
  const segments = parsed.pathname.split('/')
  const at = segments.length - 5
  if (at < 1 || `/${segments[at]}` !== ARCHIVE_PREFIX || segments[at + 4] !== 'node.zip') return url
  return `${base}/${segments.slice(at).join('/')}${parsed.search}`
}

function toItem(change: FeedEnvelope['changes'][number], base: string | undefined): MirrorItem | string {
  if (change.op === 'delete') return { kind: change.kind, tombstone: true, id: change.id }
  if (change.entity === undefined) return `a ${change.op} entry without its entity`
  const parse = { publisher: parseUpstreamPublisher, node: parseUpstreamNode, version: parseUpstreamVersion }[change.kind]
  const parsed = parse(change.entity)
  if (!parsed.success) return `malformed ${change.kind}: ${issue(parsed)}`
  const entity = parsed.output as UpstreamNode
  if (entity.id.toLowerCase() !== change.id.toLowerCase()) return `the entity's id "${entity.id}" is not the entry's`
  if (change.kind === 'publisher') return { kind: 'publisher', data: publisherItem(parsed.output as UpstreamPublisher) }
  if (change.kind === 'node') {
    const pub = parseUpstreamPublisher(entity.publisher)
    if (!pub.success) return `malformed node: publisher: ${issue(pub)}`
    const publisher = publisherItem(pub.output as UpstreamPublisher)
    return { kind: 'node', data: nodeItem(entity, publisher.id), publisher }
  }
  const version = parsed.output as UpstreamVersion
  const nodeId = typeof version.node_id === 'string' ? version.node_id : ''
  if (!nodeId) return 'malformed version: node_id: is required'
  const data = versionItem(version, nodeId)
  if (base && data.archiveUrl) data.archiveUrl = archiveUrlThrough(data.archiveUrl, base)
  data.hostNodes = change.host_nodes
  data.archiveSha256 = change.archive?.sha256
  return { kind: 'version', data }
}

/**
 * A page of a feed, as items; the serials must increase and `next` must be the last one. `base`: where the feed was
 * read, which archives are fetched through (none for a bundle's pages: its archives travel in it).
 */
export function feedPageItems(page: FeedEnvelope, since: number, base?: string): FeedPageItems {
  const out: FeedPageItems = { instance: page.instance, next: page.next, head: page.head, items: [], problems: [] }
  let last = since
  for (const change of page.changes) {
    // A feed that goes backwards or repeats itself cannot be followed safely.
    if (change.serial <= last) throw new FeedError(`the feed's serials are out of order at ${change.serial}`)
    last = change.serial
    const item = toItem(change, base)
    if (typeof item === 'string') out.problems.push({ kind: change.kind, id: change.id, reason: item, serial: change.serial })
    else out.items.push({ serial: change.serial, item })
  }
  if (page.changes.length && page.next !== last) throw new FeedError(`the feed's next (${page.next}) is not its last serial (${last})`)
  return out
}

export class FeedError extends Error {}

/**
 * A page of the feed after `since`, its envelope checked (its entities are checked one by one, by feedPageItems);
 * `signal` abandons the request.
 */
export async function fetchFeedEnvelope(http: UpstreamHttp, base: string, since: number, signal?: AbortSignal): Promise<FeedEnvelope> {
  const url = `${base}/changes?since=${since}&limit=${FEED_MAX_LIMIT}`
  const parsed = parseFeedEnvelope(await http.json(url, v.unknown(), { signal }))
  if (!parsed.success) throw invalidReply(url, parsed.issues)
  return parsed.output
}

export async function fetchFeedPage(http: UpstreamHttp, base: string, since: number): Promise<FeedPageItems> {
  return feedPageItems(await fetchFeedEnvelope(http, base, since), since, base)
}

/** Whether the upstream has a change feed (another registry-mirror) or not (the public registry). */
export async function hasFeed(http: UpstreamHttp, base: string): Promise<boolean> {
  try {
    await http.json(`${base}/changes?since=0&limit=1`, FeedEnvelopeSchema)
    return true
  } catch (err) {
    if ((err as { status?: number }).status === 404 || (err as { kind?: string }).kind === 'invalid') return false
    throw err
  }
}
