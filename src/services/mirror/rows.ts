/** Store rows for mirrored items, and the comparison that keeps a re-run from writing what is already there. */
import type { Insertable } from 'kysely'
import type { NodeItem, PublisherItem, VersionItem } from '../../domain/mirror-items'
import { platformKeys, repositoryKey } from '../../domain/platform'
import type { NodeTable, NodeVersionTable, PublisherTable } from '../../store/schema'

/** A list as stored (JSON); most lists are empty. */
const list = (xs: readonly string[]) => (xs.length ? JSON.stringify(xs) : '[]')

/**
 * An item's creation time; one the upstream did not give keeps the stored one, so that reading an unchanged entity
 * again is no change (and no feed entry), however often an upstream repeats it.
 */
const createdAt = (item: { created_at: string }, current: { created_at: string } | undefined, now: string) =>
  item.created_at || current?.created_at || now

export function publisherRow(
  p: PublisherItem,
  status: PublisherItem['status'],
  now: string,
  current?: { created_at: string },
): Insertable<PublisherTable> {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    website: p.website,
    support: p.support,
    source_code_repo: p.source_code_repo,
    logo: p.logo,
    status,
    created_at: createdAt(p, current, now),
    updated_at: now,
  }
}

/** Every column a mirror sets (all rows alike, so that they insert together); the latest version is computed here. */
export function nodeRow(n: NodeItem, owner: string, status: NodeItem['status'], now: string, current?: { created_at: string }) {
  return {
    id: n.id,
    normalized_id: n.id.toLowerCase(),
    publisher_id: owner,
    name: n.name,
    description: n.description,
    author: n.author,
    license: n.license,
    icon: n.icon,
    banner_url: n.banner_url,
    repository: n.repository,
    repository_key: repositoryKey(n.repository),
    category: n.category,
    tags_json: list(n.tags),
    tags_admin_json: list(n.tags_admin),
    supported_os_json: list(n.supported_os),
    supported_accelerators_json: list(n.supported_accelerators),
    os_keys: platformKeys(n.supported_os),
    accelerator_keys: platformKeys(n.supported_accelerators),
    supported_hostui_version: n.supported_hostui_version,
    supported_hostui_frontend_version: n.supported_hostui_frontend_version,
    preempted_host_node_names_json: list(n.preempted_host_node_names),
    translations_json: JSON.stringify(n.translations),
    repohost_stars: n.repohost_stars,
    search_ranking: n.search_ranking,
    downloads: n.downloads,
    mirrored_rating: n.rating,
    status,
    status_detail: n.status_detail,
    created_at: createdAt(n, current, now),
    updated_at: now,
  } satisfies Insertable<NodeTable> & { downloads: number }
}

export function versionRow(v: VersionItem, status: VersionItem['status'], now: string, current?: { created_at: string }) {
  return {
    id: v.id,
    node_id: v.node_id,
    version: v.version,
    changelog: v.changelog,
    dependencies_json: list(v.dependencies),
    deprecated: v.deprecated ? 1 : 0,
    status,
    status_reason: v.status_reason,
    host_node_extract_status: v.host_node_extract_status,
    supported_os_json: list(v.supported_os),
    supported_accelerators_json: list(v.supported_accelerators),
    supported_hostui_version: v.supported_hostui_version,
    supported_hostui_frontend_version: v.supported_hostui_frontend_version,
    tags_json: list(v.tags),
    tags_admin_json: list(v.tags_admin),
    created_at: createdAt(v, current, now),
    updated_at: now,
  } satisfies Insertable<NodeVersionTable>
}

const BOOKKEEPING = new Set(['updated_at'])

/** Whether writing `next` would change `current` (timestamps of our own bookkeeping aside). */
export function differs(current: object, next: object): boolean {
  const cur = current as Record<string, unknown>
  for (const [key, value] of Object.entries(next)) {
    if (BOOKKEEPING.has(key)) continue
    if (cur[key] !== value) return true
  }
  return false
}

/**
 * Rows of one shape in statements of a fixed number of rows (within SQLite's 32,766 bound values), so that
 * their SQL repeats and its prepared statement is reused.
 */
export function batches<T extends object>(rows: readonly T[]): T[][] {
  if (!rows.length) return []
  const perRow = Object.keys(rows[0]!).length
  const size = Math.min(250, Math.max(1, Math.floor(30_000 / perRow)))
  const out: T[][] = []
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size))
  return out
}
