/** GET /versions: versions across nodes, newest first, paged (the web front end's admin screens list uploads to review with it). */
import type { VersionJson } from '../domain/wire'
import { badRequest, nodeBanned } from '../errors'
import { feedPosition } from '../store/changes'
import type { Store } from '../store/db'
import { findNode } from '../store/nodes'
import type { VersionStatus } from '../store/schema'
import { listArchives, pageVersions } from '../store/versions'
import type { Actor } from './access'
import type { Deps } from './deps'
import { DEFAULT_VERSION_STATUSES } from './nodes'
import { VersionTotals } from './version-totals'
import { versionJson } from './views'

export const MAX_VERSION_PAGE_SIZE = 100

/**
 * How deep versions across nodes are paged: a page reads its offset in index entries (about 1 ms a thousand at a
 * million versions, beside some 20 ms for a page of 100 at any depth), and this bounds that part to some 10 ms, the
 * result window search engines default to. One node's versions are not bounded.
 */
export const MAX_VERSIONS_ACROSS_NODES = 10_000

/** How long a count past MAX_VERSIONS_ACROSS_NODES is kept whatever is written meanwhile (version-totals.ts). */
export const LARGE_TOTAL_KEEP_MS = 60_000

const totals = new WeakMap<Store, VersionTotals>()

async function totalAcrossNodes(db: Store, key: string, count: () => Promise<number>): Promise<number> {
  const { lastSerial } = await feedPosition(db)
  let known = totals.get(db)
  if (!known) totals.set(db, (known = new VersionTotals({ exactBelow: MAX_VERSIONS_ACROSS_NODES, keepMs: LARGE_TOTAL_KEEP_MS })))
  return known.get(key, lastSerial, count)
}

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
  const offset = (q.page - 1) * q.pageSize
  if (q.nodeId === undefined && offset >= MAX_VERSIONS_ACROSS_NODES)
    throw badRequest(
      `page ${q.page} is too deep: versions across nodes are listed to the first ${MAX_VERSIONS_ACROSS_NODES.toLocaleString('en')}; ` +
        'ask for the versions of one node (nodeId) to go further',
    )
  const statuses = q.statuses ?? DEFAULT_VERSION_STATUSES
  const { rows, count } = await pageVersions(deps.db, {
    nodeId: q.nodeId,
    statuses,
    includeBannedNodes: isAdmin,
    offset,
    limit: q.pageSize,
  })
  const total =
    q.nodeId === undefined ? await totalAcrossNodes(deps.db, `${isAdmin}:${[...new Set(statuses)].sort()}`, count) : await count()
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
