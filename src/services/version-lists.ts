/** GET /versions: versions across nodes, newest first, paged (the web front end's admin screens list uploads to review with it). */
import type { VersionJson } from '../domain/wire'
import { badRequest, nodeBanned } from '../errors'
import { findNode } from '../store/nodes'
import type { VersionStatus } from '../store/schema'
import { listArchives, pageVersions } from '../store/versions'
import type { Actor } from './access'
import type { Deps } from './deps'
import { DEFAULT_VERSION_STATUSES } from './nodes'
import { versionJson } from './views'

export const MAX_VERSION_PAGE_SIZE = 100

export interface VersionPage {
  versions: VersionJson[]
  total: number
  page: number
  pageSize: number
  totalPages: number
}

/** Versions of banned nodes are listed to admins only (a banned node's own versions are 403 `Node Banned` to others). */
export async function listVersionsPage(
  deps: Deps,
  actor: Actor,
  q: { nodeId?: string; statuses?: VersionStatus[]; includeReason: boolean; page: number; pageSize: number },
): Promise<VersionPage> {
  if (q.pageSize > MAX_VERSION_PAGE_SIZE)
    throw badRequest(`Invalid pageSize: ${q.pageSize}. The maximum allowed is ${MAX_VERSION_PAGE_SIZE}.`)
  const isAdmin = actor.user?.status === 'active' && actor.user.is_admin === 1
  if (q.nodeId !== undefined && !isAdmin && (await findNode(deps.db, q.nodeId))?.status === 'banned') throw nodeBanned()
  const { rows, total } = await pageVersions(deps.db, {
    nodeId: q.nodeId,
    statuses: q.statuses ?? DEFAULT_VERSION_STATUSES,
    includeBannedNodes: isAdmin,
    offset: (q.page - 1) * q.pageSize,
    limit: q.pageSize,
  })
  const archived = new Set(
    (
      await listArchives(
        deps.db,
        rows.map((r) => r.id),
      )
    ).map((a) => a.version_id),
  )
  const versions = rows.map((r) =>
    versionJson(
      r,
      { id: r.node_id, publisher_id: r.publisher_id },
      { publicUrl: deps.settings.publicUrl, hasArchive: archived.has(r.id), includeReason: q.includeReason },
    ),
  )
  return { versions, total, page: q.page, pageSize: q.pageSize, totalPages: Math.ceil(total / q.pageSize) }
}
