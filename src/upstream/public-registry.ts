/**
 * Reads the public registry, which has no change feed: pages of `GET /nodes`, a node's versions (every status),
 * and the host node names of a version. Replies are validated; one malformed item is reported, not fatal.
 */
import * as v from 'valibot'
import {
  nodeItem,
  publisherItem,
  versionItem,
  type ItemProblem,
  type NodeItem,
  type PublisherItem,
  type VersionItem,
} from '../domain/mirror-items'
import {
  UpstreamHostNodePageSchema,
  UpstreamNodePageSchema,
  UpstreamVersionListSchema,
  parseUpstreamNode,
  parseUpstreamPublisher,
  parseUpstreamVersion,
  type UpstreamNode,
  type UpstreamPublisher,
  type UpstreamVersion,
} from '../domain/upstream-wire'
import { VERSION_STATUS } from '../domain/wire'
import type { UpstreamHttp } from './http-client'

/** Asked for; the upstream clamps it and says so in `limit`. */
export const PUBLIC_PAGE_LIMIT = 1000

export interface PublicNode {
  node: NodeItem
  publisher: PublisherItem
  /** The upstream's latest version, as it names it: a change to it means the versions changed. */
  latest?: { id: string; version: string; status: string }
}

export interface PublicPage {
  nodes: PublicNode[]
  problems: ItemProblem[]
  totalPages: number
  total: number
}

const reason = (issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]]) => `${v.getDotPath(issues[0]) ?? 'item'}: ${issues[0].message}`
const idOf = (x: unknown) => (x && typeof x === 'object' && typeof (x as { id?: unknown }).id === 'string' ? (x as { id: string }).id : '?')

export async function fetchNodePage(http: UpstreamHttp, base: string, opts: { page: number; since?: string }): Promise<PublicPage> {
  const query = new URLSearchParams({ page: String(opts.page), limit: String(PUBLIC_PAGE_LIMIT), include_banned: 'true' })
  if (opts.since) query.set('timestamp', opts.since)
  const reply = await http.json(`${base}/nodes?${query}`, UpstreamNodePageSchema)
  const limit = reply.limit && reply.limit > 0 ? reply.limit : PUBLIC_PAGE_LIMIT
  // No more pages than its total implies: an upstream claiming a trillion pages is not paged through to the end.
  const totalPages = Math.min(reply.totalPages ?? Infinity, Math.ceil(reply.total / limit))
  const out: PublicPage = { nodes: [], problems: [], total: reply.total, totalPages }
  for (const raw of reply.nodes) {
    const parsed = parseUpstreamNode(raw)
    if (!parsed.success) {
      out.problems.push({ kind: 'node', id: idOf(raw), reason: `malformed node: ${reason(parsed.issues)}` })
      continue
    }
    const node = parsed.output as UpstreamNode
    const pub = parseUpstreamPublisher(node.publisher)
    if (!pub.success) {
      out.problems.push({ kind: 'node', id: node.id, reason: `malformed node: publisher: ${reason(pub.issues)}` })
      continue
    }
    const publisher = publisherItem(pub.output as UpstreamPublisher)
    const lv = node.latest_version as { id?: unknown; version?: unknown; status?: unknown } | null | undefined
    const latest =
      lv && typeof lv.id === 'string'
        ? { id: lv.id.toLowerCase(), version: String(lv.version ?? ''), status: String(lv.status ?? '') }
        : undefined
    out.nodes.push({ node: nodeItem(node, publisher.id), publisher, latest })
  }
  return out
}

/** Every version of a node, whatever its status; undefined when the node is gone (404). */
export async function fetchVersions(
  http: UpstreamHttp,
  base: string,
  nodeId: string,
): Promise<{ versions: VersionItem[]; problems: ItemProblem[] } | undefined> {
  const query = new URLSearchParams({ include_status_reason: 'true' })
  for (const status of Object.values(VERSION_STATUS)) query.append('statuses', status)
  let list: unknown[]
  try {
    list = await http.json(`${base}/nodes/${encodeURIComponent(nodeId)}/versions?${query}`, UpstreamVersionListSchema)
  } catch (err) {
    if ((err as { status?: number }).status === 404) return undefined
    throw err
  }
  const out = { versions: [] as VersionItem[], problems: [] as ItemProblem[] }
  for (const raw of list) {
    const parsed = parseUpstreamVersion(raw)
    if (parsed.success) out.versions.push(versionItem(parsed.output as UpstreamVersion, nodeId))
    else out.problems.push({ kind: 'version', id: idOf(raw), reason: `malformed version of "${nodeId}": ${reason(parsed.issues)}` })
  }
  return out
}

/** The host node class names the upstream lists for a version (every page of them). */
export async function fetchHostNodeNames(http: UpstreamHttp, base: string, nodeId: string, version: string): Promise<string[]> {
  const names = new Set<string>()
  for (let page = 1, pages = 1; page <= pages && page <= 100; page++) {
    const url = `${base}/nodes/${encodeURIComponent(nodeId)}/versions/${encodeURIComponent(version)}/comfy-nodes?page=${page}&limit=1000`
    let reply: v.InferOutput<typeof UpstreamHostNodePageSchema>
    try {
      reply = await http.json(url, UpstreamHostNodePageSchema)
    } catch (err) {
      if ((err as { status?: number }).status === 404) break
      throw err
    }
    for (const n of reply.comfy_nodes ?? []) names.add(n.comfy_node_name)
    pages = Math.max(1, Math.floor(reply.totalNumberOfPages ?? 1))
  }
  return [...names].sort()
}

/** Whether a node is still there (to confirm a disappearance before recording it). */
export async function nodeState(http: UpstreamHttp, base: string, nodeId: string): Promise<'exists' | 'gone' | 'banned'> {
  try {
    await http.json(`${base}/nodes/${encodeURIComponent(nodeId)}`, v.looseObject({ id: v.string() }))
    return 'exists'
  } catch (err) {
    const status = (err as { status?: number }).status
    if (status === 404) return 'gone'
    if (status === 403) return 'banned' // the public registry answers 403 for a banned node
    throw err
  }
}
