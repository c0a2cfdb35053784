/** Reading one node and its versions, installing, and the publisher's version edits. */
import { UUID_PATTERN } from '../domain/ids'
import { normalizeSemver } from '../domain/semver'
import type { NodeJson, VersionJson } from '../domain/wire'
import { AppError, forbidden, nodeBanned, notFound } from '../errors'
import { nodesByNormalizedIds, versionsByKeys } from '../store/batch'
import { findNode, findNodeHead, type NodeHead } from '../store/nodes'
import type { NodeRow, VersionRow, VersionStatus } from '../store/schema'
import {
  availableArchiveIds,
  findVersion,
  findVersionById,
  findInstallableNode,
  listHostNodes,
  listVersionsOfNode,
  updateVersion,
} from '../store/versions'
import { type Actor, holdsRole, requireLocal, requireRole } from './access'
import { commitWrite } from './changes'
import type { Deps } from './deps'
import { sortVersionsDesc } from './latest'
import { renderNodes } from './node-documents'
import { renderVersions, versionJson } from './views'

/** A node that is neither unknown nor deleted; banned ones are refused with the upstream's 403. */
export async function requireNode(deps: Deps, id: string, opts: { allowBanned?: boolean } = {}): Promise<NodeRow> {
  return shownNode(await findNode(deps.db, id), id, opts)
}

/** The same node's head only (its id as stored, publisher and status), for reads that show nothing else of its row. */
export async function requireNodeHead(deps: Deps, id: string): Promise<NodeHead> {
  return shownNode(await findNodeHead(deps.db, id), id)
}

function shownNode<T extends NodeHead>(node: T | undefined, id: string, opts: { allowBanned?: boolean } = {}): T {
  if (!node || node.status === 'deleted') throw notFound(`node "${id}" not found`)
  if (node.status === 'banned' && !opts.allowBanned) throw nodeBanned()
  return node
}

/** The version as stored: a semantic version normalized (`v1.0` is 1.0.0), anything else as asked. */
const storedVersion = (version: string) => normalizeSemver(version) ?? version

async function requireVersion(deps: Deps, node: NodeHead, version: string): Promise<VersionRow> {
  return shownVersion(await findVersion(deps.db, node.id, storedVersion(version)), node, version)
}

function shownVersion(row: VersionRow | undefined, node: NodeHead, version: string): VersionRow {
  if (!row || row.status === 'deleted') throw notFound(`version ${version} of node "${node.id}" not found`)
  return row
}

/** One node as clients read it, with publisher and latest_version. */
export async function renderNode(deps: Deps, node: NodeRow): Promise<NodeJson> {
  const [json] = await renderNodes(deps.db, [node], { publicUrl: deps.settings.publicUrl })
  return json!
}

export async function getNode(deps: Deps, id: string): Promise<NodeJson> {
  return renderNode(deps, await requireNode(deps, id))
}

/**
 * The same node as JSON text, from the per-node cache (its download count may lag by one counter flush). Its status
 * is asked of the store each time (another instance may have banned or deleted it); the rest of its row is not read.
 */
export async function getNodeJsonText(deps: Deps, id: string): Promise<string> {
  const node = await requireNodeHead(deps, id)
  const [text] = await deps.nodeJson.render([node.id])
  if (text === undefined) throw notFound(`node "${id}" not found`)
  return text
}

export const DEFAULT_VERSION_STATUSES: VersionStatus[] = ['active', 'pending', 'flagged']

/** A node's versions (newest first), and the node as stored (the id counted, whatever case `id` used). */
export async function listNodeVersions(
  deps: Deps,
  id: string,
  opts: { statuses?: VersionStatus[]; includeReason: boolean },
): Promise<{ node: NodeHead; versions: VersionJson[] }> {
  const { node, rows } = await sortedVersions(deps, id, opts.statuses)
  return {
    node,
    versions: await renderVersions(deps.db, node, rows, { publicUrl: deps.settings.publicUrl, includeReason: opts.includeReason }),
  }
}

/**
 * One page of the versions listNodeVersions gives (newest first), and how many there are: every row is read for
 * the order (semantic versions sort in code), only the page's are rendered (a node of 5,000 versions: 0.1 s).
 */
export async function pageNodeVersions(
  deps: Deps,
  id: string,
  opts: { includeReason: boolean; page: number; limit: number },
): Promise<{ versions: VersionJson[]; total: number }> {
  const { node, rows } = await sortedVersions(deps, id)
  const page = rows.slice((opts.page - 1) * opts.limit, opts.page * opts.limit)
  const versions = await renderVersions(deps.db, node, page, { publicUrl: deps.settings.publicUrl, includeReason: opts.includeReason })
  return { versions, total: rows.length }
}

async function sortedVersions(deps: Deps, id: string, statuses = DEFAULT_VERSION_STATUSES) {
  const node = await requireNodeHead(deps, id)
  return { node, rows: sortVersionsDesc(await listVersionsOfNode(deps.db, node.id, statuses)) }
}

export async function getNodeVersion(deps: Deps, id: string, version: string): Promise<VersionJson> {
  const node = await requireNodeHead(deps, id)
  const [json] = await renderVersions(deps.db, node, [await requireVersion(deps, node, version)], { publicUrl: deps.settings.publicUrl })
  return json!
}

export async function getVersionHostNodes(deps: Deps, id: string, version: string) {
  const node = await requireNodeHead(deps, id)
  const row = await requireVersion(deps, node, version)
  return { node_id: node.id, version: row.version, host_nodes: await listHostNodes(deps.db, row.id) }
}

/** The node that provides a host node class, best ranked first when several do. */
export async function getHostNodeOwner(deps: Deps, name: string): Promise<NodeJson> {
  const id = await deps.search.hostNodeOwner(name)
  if (!id) throw notFound(`no node provides host node "${name}"`)
  return getNode(deps, id)
}

/**
 * Whether a version's archive may be handed out: banned never; flagged (the archive check or an admin found
 * a problem) only to the publisher's members and admins, who need to see what was wrong.
 */
export async function checkArchiveAccess(deps: Deps, actor: Actor | undefined, node: NodeHead, row: VersionRow): Promise<void> {
  if (row.status === 'banned') throw forbidden(`version ${row.version} of node "${node.id}" is banned`, 'version_banned')
  const activeUser = actor?.user?.status === 'active' ? actor.user : undefined
  if (row.status === 'flagged' && !(await holdsRole(deps.db, activeUser, node.publisher_id, 'member'))) {
    const reason = row.status_reason ? `: ${row.status_reason}` : ''
    throw forbidden(`version ${row.version} of node "${node.id}" is flagged${reason}`, 'version_flagged')
  }
}

/**
 * One install: a download counted in memory (flushed in batches, services/downloads.ts), unless the registry is
 * read-only, which still serves installs but does not count them; and the metric either way.
 */
export function countInstall(deps: Deps, nodeId: string): void {
  if (!deps.settings.readOnly) deps.downloads.count(nodeId)
  deps.metrics.downloads.inc({ kind: 'install' })
}

/** The node (any status) and the version installers get when they name none: its highest active one with an archive here. */
async function installTarget(deps: Deps, id: string) {
  // In one statement: the node and the versions it may install.
  const found = await findInstallableNode(deps.db, id)
  return found && { node: found.node, latest: sortVersionsDesc(found.versions)[0] }
}

/** What an install naming no version gets, without counting one: for the pages. */
export async function latestInstallableVersion(deps: Deps, id: string): Promise<VersionJson | undefined> {
  const target = await installTarget(deps, id)
  return target?.latest && versionJson(target.latest, target.node, { publicUrl: deps.settings.publicUrl, hasArchive: true })
}

/** The version to install (the latest installable when none is named), counting one download unless read-only. */
export async function installNode(
  deps: Deps,
  actor: Actor,
  id: string,
  version?: string,
  opts: { count?: boolean } = {},
): Promise<VersionJson> {
  const counted = opts.count !== false
  if (!version) {
    const target = await installTarget(deps, id)
    if (!target || target.node.status === 'deleted') throw notFound(`node "${id}" not found`)
    if (target.node.status === 'banned') throw nodeBanned()
    if (!target.latest) throw notFound(`node "${target.node.id}" has no installable version`)
    if (counted) countInstall(deps, target.node.id)
    return versionJson(target.latest, target.node, { publicUrl: deps.settings.publicUrl, hasArchive: true })
  }
  const node = await requireNodeHead(deps, id)
  const row = await requireVersion(deps, node, version)
  await checkArchiveAccess(deps, actor, node, row)
  if (!(await availableArchiveIds(deps.db, [row.id])).size) throw notFound(`version ${row.version} of node "${node.id}" has no archive yet`)
  if (counted) countInstall(deps, node.id)
  return versionJson(row, node, { publicUrl: deps.settings.publicUrl, hasArchive: true })
}

/**
 * A node reached through its publisher's path: unknown, deleted, or another publisher's node is 404 (the path
 * must not reveal or reach into other publishers). A banned node is 403 `Node Banned`, to admins too unless
 * `adminsMayModerate` (an admin editing or deleting a banned node is moderating it).
 */
export async function requirePublisherNode(
  deps: Deps,
  actor: Actor,
  path: { publisherId: string; nodeId: string },
  opts: { adminsMayModerate?: boolean } = {},
): Promise<NodeRow> {
  const node = await findNode(deps.db, path.nodeId)
  if (!node || node.status === 'deleted' || node.publisher_id !== path.publisherId) throw notFound(`node "${path.nodeId}" not found`)
  if (node.status === 'banned' && !(opts.adminsMayModerate && actor.user?.is_admin === 1)) throw nodeBanned()
  return node
}

/** A version of that node by its id (the NodeVersion `id`, not its semantic version); deleted ones are 404. */
export async function requireVersionOfNode(deps: Deps, node: NodeRow, versionId: string): Promise<VersionRow> {
  const row = UUID_PATTERN.test(versionId) ? await findVersionById(deps.db, versionId.toLowerCase()) : undefined
  if (!row || row.node_id !== node.id || row.status === 'deleted') throw notFound(`version "${versionId}" of node "${node.id}" not found`)
  return row
}

export async function updateNodeVersion(
  deps: Deps,
  actor: Actor,
  path: { publisherId: string; nodeId: string; versionId: string },
  changes: { changelog?: string; deprecated?: boolean },
): Promise<VersionJson> {
  await requireRole(deps.db, actor, path.publisherId, 'member')
  const node = await requirePublisherNode(deps, actor, path)
  await requireLocal(deps.db, { nodeId: node.id })
  const row = await requireVersionOfNode(deps, node, path.versionId)
  const updated = await commitWrite(deps, async (w) => {
    const edits = {
      ...(changes.changelog !== undefined && { changelog: changes.changelog }),
      ...(changes.deprecated !== undefined && { deprecated: changes.deprecated ? 1 : 0 }),
    }
    await updateVersion(w.db, row.id, edits, w.now)
    w.version(row.id, node.id)
    return (await findVersionById(w.db, row.id))!
  })
  const [json] = await renderVersions(deps.db, node, [updated], { publicUrl: deps.settings.publicUrl })
  return json!
}

export type BulkResult = {
  identifier: { node_id: string; version: string }
  status: 'success' | 'not_found' | 'error'
  node_version?: VersionJson
  error_message?: string
}

/**
 * Every item of a bulk lookup in a few statements (the nodes, their versions, which have an archive), answered as
 * getNodeVersion would answer it alone: 500 items one by one held the event loop 80-130 ms at 100,000 nodes.
 */
export async function bulkVersions(deps: Deps, items: { node_id: string; version: string }[]): Promise<BulkResult[]> {
  let found: { nodes: Map<string, NodeRow>; versions: Map<string, VersionRow>; withArchive: Set<string> }
  try {
    found = await lookUpBulk(deps, items)
  } catch (err) {
    return items.map((identifier) => failedItem(deps, identifier, err))
  }
  return items.map((identifier): BulkResult => {
    try {
      const node = shownNode(found.nodes.get(identifier.node_id.toLowerCase()), identifier.node_id)
      const row = shownVersion(found.versions.get(versionKey(node.id, storedVersion(identifier.version))), node, identifier.version)
      const hasArchive = found.withArchive.has(row.id)
      return { identifier, status: 'success', node_version: versionJson(row, node, { publicUrl: deps.settings.publicUrl, hasArchive }) }
    } catch (err) {
      return failedItem(deps, identifier, err)
    }
  })
}

/** Only our own errors explain themselves; anything else is a fault, logged and never shown. */
function failedItem(deps: Deps, identifier: BulkResult['identifier'], err: unknown): BulkResult {
  if (err instanceof AppError) return { identifier, status: err.status === 404 ? 'not_found' : 'error', error_message: err.message }
  deps.log.error('bulk.lookup_failed', { node: identifier.node_id, error: (err as Error).message })
  return { identifier, status: 'error', error_message: 'lookup failed' }
}

const versionKey = (nodeId: string, version: string) => `${nodeId}\n${version}`

async function lookUpBulk(deps: Deps, items: { node_id: string; version: string }[]) {
  const normalizedIds = [...new Set(items.map((i) => i.node_id.toLowerCase()))]
  const nodes = new Map((await nodesByNormalizedIds(deps.db, normalizedIds)).map((node) => [node.normalized_id, node]))
  const pairs = new Map<string, { nodeId: string; version: string }>()
  for (const item of items) {
    const node = nodes.get(item.node_id.toLowerCase())
    if (!node || node.status !== 'active') continue
    const version = storedVersion(item.version)
    pairs.set(versionKey(node.id, version), { nodeId: node.id, version })
  }
  const rows = await versionsByKeys(deps.db, [...pairs.values()])
  const versions = new Map(rows.map((row) => [versionKey(row.node_id, row.version), row]))
  const withArchive = await availableArchiveIds(
    deps.db,
    rows.map((row) => row.id),
  )
  return { nodes, versions, withArchive }
}
