/** Paged node lists: /nodes/search, /nodes and a publisher's nodes, all answered by the NodeSearch engine. */
import type { NodePage } from '../domain/wire'
import type { NodeQuery } from '../search/node-search'
import { listNodesByIds, listNodesOfPublisher } from '../store/nodes'
import { requirePublisher } from './access'
import type { Deps } from './deps'
import { renderNodes } from './views'

export const MAX_PAGE_SIZE = 100

export type ListParams = Omit<NodeQuery, 'offset' | 'limit'> & { page: number; limit: number }

async function renderIds(deps: Deps, ids: string[]) {
  const rows = await listNodesByIds(deps.db, ids)
  const byId = new Map(rows.map((r) => [r.id, r]))
  const ordered = ids.flatMap((id) => byId.get(id) ?? [])
  return renderNodes(deps.db, ordered, { publicUrl: deps.settings.publicUrl })
}

export async function listNodePage(deps: Deps, params: ListParams): Promise<NodePage> {
  const limit = Math.min(params.limit, MAX_PAGE_SIZE)
  const { page, ...query } = params
  const found = await deps.search.find({ ...query, offset: (page - 1) * limit, limit })
  return {
    nodes: await renderIds(deps, found.ids),
    page,
    limit,
    total: found.total,
    totalPages: Math.ceil(found.total / limit),
  }
}

export async function listPublisherNodes(
  deps: Deps,
  publisherId: string,
  opts: { includeBanned: boolean; page: number; limit: number },
) {
  await requirePublisher(deps.db, publisherId)
  const limit = Math.min(opts.limit, 1000)
  const rows = await listNodesOfPublisher(deps.db, publisherId, { includeBanned: opts.includeBanned, offset: (opts.page - 1) * limit, limit })
  return renderNodes(deps.db, rows, { publicUrl: deps.settings.publicUrl })
}
