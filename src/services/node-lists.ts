/** Paged node lists: /nodes/search and /nodes (answered by the NodeSearch engine), and a publisher's nodes. */
import type { NodePage } from '../domain/wire'
import type { NodeQuery } from '../domain/node-query'
import { listNodesOfPublisher, pageNodeIdsOfPublisher } from '../store/nodes'
import { requirePublisher } from './access'
import type { Deps } from './deps'
import { renderNodes } from './node-documents'

const MAX_PAGE_SIZE = 100

export type ListParams = Omit<NodeQuery, 'offset' | 'limit'> & { page: number; limit: number }

/**
 * A page of nodes as JSON text (a NodePage), the nodes' texts from the per-node JSON cache as they are, and the ids
 * it lists.
 */
export async function nodePage(deps: Deps, params: ListParams): Promise<{ text: string; ids: string[] }> {
  const limit = Math.min(params.limit, MAX_PAGE_SIZE)
  const { page, ...query } = params
  deps.metrics.searchQueries.inc({ engine: deps.search.status().engine })
  const found = await deps.search.find({ ...query, offset: (page - 1) * limit, limit })
  return { text: pageText(await deps.nodeJson.render(found.ids), { page, limit, total: found.total }), ids: found.ids }
}

/**
 * Joined once, into one string: the nodes' texts are ropes (a count before a tail). A Blob of the parts (each one
 * encoded on its own) cost the server about half as much CPU again for a page of 30, and `nodes.join(',')` inside a
 * template (joined, then flattened again when sent) 15-20 µs more (scripts/bench/page-body.ts).
 */
export function pageText(nodes: readonly string[], meta: Omit<NodePage, 'nodes' | 'totalPages'>): string {
  const rest: Omit<NodePage, 'nodes'> = { ...meta, totalPages: Math.ceil(meta.total / meta.limit) }
  const parts = ['{"nodes":[']
  for (let i = 0; i < nodes.length; i++) {
    if (i) parts.push(',')
    parts.push(nodes[i]!)
  }
  parts.push(`],${JSON.stringify(rest).slice(1)}`)
  return parts.join('')
}

/** GET /publishers/{id}/nodes/v2: a publisher's nodes in id order, in the shape of the other node lists. */
export async function publisherNodePage(
  deps: Deps,
  publisherId: string,
  opts: { includeBanned: boolean; page: number; limit: number },
): Promise<string> {
  await requirePublisher(deps.db, publisherId)
  const limit = Math.min(opts.limit, MAX_PAGE_SIZE)
  const found = await pageNodeIdsOfPublisher(deps.db, publisherId, {
    includeBanned: opts.includeBanned,
    offset: (opts.page - 1) * limit,
    limit,
  })
  return pageText(await deps.nodeJson.render(found.ids), { page: opts.page, limit, total: found.total })
}

/** The same page as objects, for callers that render it themselves (the web pages). */
export async function findNodes(deps: Deps, params: ListParams): Promise<NodePage> {
  return JSON.parse((await nodePage(deps, params)).text) as NodePage
}

export async function listPublisherNodes(deps: Deps, publisherId: string, opts: { includeBanned: boolean; page: number; limit: number }) {
  await requirePublisher(deps.db, publisherId)
  const limit = Math.min(opts.limit, 1000)
  const rows = await listNodesOfPublisher(deps.db, publisherId, {
    includeBanned: opts.includeBanned,
    offset: (opts.page - 1) * limit,
    limit,
  })
  return renderNodes(deps.db, rows, { publicUrl: deps.settings.publicUrl })
}
