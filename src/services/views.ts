/** Turns store rows into the JSON real clients read, loading related rows in batches (never per item). */
import { archivePath } from '../domain/urls'
import {
  NODE_STATUS,
  PUBLISHER_STATUS,
  VERSION_STATUS,
  type MemberJson,
  type NodeJson,
  type PublisherJson,
  type VersionJson,
} from '../domain/wire'
import type { Store } from '../store/db'
import { listMembers, listPublishersByIds, type MemberWithUser } from '../store/publishers'
import type { NodeRow, PublisherRow, UserRow, VersionRow } from '../store/schema'
import { availableArchiveIds, listVersionsByIds } from '../store/versions'

const list = (json: string): string[] => JSON.parse(json) as string[]

export function versionJson(
  v: VersionRow,
  node: Pick<NodeRow, 'id' | 'publisher_id'>,
  opts: { publicUrl: string; hasArchive: boolean; includeReason?: boolean },
): VersionJson {
  return {
    id: v.id,
    node_id: node.id,
    version: v.version,
    changelog: v.changelog,
    dependencies: list(v.dependencies_json),
    deprecated: v.deprecated === 1,
    status: VERSION_STATUS[v.status],
    status_reason: opts.includeReason === false ? '' : v.status_reason,
    host_node_extract_status: v.host_node_extract_status,
    createdAt: v.created_at,
    downloadUrl: opts.hasArchive ? opts.publicUrl + archivePath(node.publisher_id, node.id, v.version) : '',
    supported_os: list(v.supported_os_json),
    supported_accelerators: list(v.supported_accelerators_json),
    supported_hostui_version: v.supported_hostui_version,
    supported_hostui_frontend_version: v.supported_hostui_frontend_version,
    tags: list(v.tags_json),
    tags_admin: list(v.tags_admin_json),
    comfy_node_extract_status: v.host_node_extract_status,
    supported_comfyui_version: v.supported_hostui_version,
    supported_comfyui_frontend_version: v.supported_hostui_frontend_version,
  }
}

/** Versions of one node, each with its downloadUrl when it has an archive here (stored, or fetched from its upstream on first download). */
export async function renderVersions(
  db: Store,
  node: Pick<NodeRow, 'id' | 'publisher_id'>,
  versions: VersionRow[],
  opts: { publicUrl: string; includeReason?: boolean },
): Promise<VersionJson[]> {
  const withArchive = await availableArchiveIds(
    db,
    versions.map((v) => v.id),
  )
  return versions.map((v) => versionJson(v, node, { ...opts, hasArchive: withArchive.has(v.id) }))
}

function memberJson(m: MemberWithUser, withEmail: boolean): MemberJson {
  const user = withEmail ? { id: m.user_id, name: m.name, email: m.email } : { id: m.user_id, name: m.name }
  return { id: m.id, role: m.role, user }
}

function publisherJson(p: PublisherRow, members: MemberJson[]): PublisherJson {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    website: p.website,
    support: p.support,
    source_code_repo: p.source_code_repo,
    logo: p.logo,
    createdAt: p.created_at,
    status: PUBLISHER_STATUS[p.status],
    members,
  }
}

/** Publishers with their members; emails only to an admin or a member of that publisher. */
export async function renderPublishers(db: Store, rows: PublisherRow[], viewer?: UserRow): Promise<PublisherJson[]> {
  const members = await listMembers(
    db,
    rows.map((p) => p.id),
  )
  // Grouped once: filtering every publisher's members out of the whole list was quadratic (8.4 s, the event loop
  // held, for 28,000 publishers with an owner each).
  const byPublisher = Map.groupBy(members, (m) => m.publisher_id)
  return rows.map((p) => {
    const own = byPublisher.get(p.id) ?? []
    const withEmail = viewer !== undefined && (viewer.is_admin === 1 || own.some((m) => m.user_id === viewer.id))
    return publisherJson(
      p,
      own.map((m) => memberJson(m, withEmail)),
    )
  })
}

export function nodeJson(n: NodeRow): NodeJson {
  return {
    id: n.id,
    name: n.name,
    description: n.description,
    author: n.author,
    license: n.license,
    icon: n.icon,
    banner_url: n.banner_url,
    repository: n.repository,
    category: n.category,
    tags: list(n.tags_json),
    tags_admin: list(n.tags_admin_json),
    downloads: n.downloads,
    // A mirrored node shows its upstream's rating (the upstream sends the mean, not the reviews).
    rating: n.mirrored_rating ?? (n.review_count ? n.star_total / n.review_count : 0),
    repohost_stars: n.repohost_stars,
    search_ranking: n.search_ranking,
    status: NODE_STATUS[n.status],
    status_detail: n.status_detail,
    supported_os: list(n.supported_os_json),
    supported_accelerators: list(n.supported_accelerators_json),
    supported_hostui_version: n.supported_hostui_version,
    supported_hostui_frontend_version: n.supported_hostui_frontend_version,
    preempted_host_node_names: list(n.preempted_host_node_names_json),
    translations: JSON.parse(n.translations_json) as Record<string, unknown>,
    created_at: n.created_at,
    github_stars: n.repohost_stars,
    supported_comfyui_version: n.supported_hostui_version,
    supported_comfyui_frontend_version: n.supported_hostui_frontend_version,
    preempted_comfy_node_names: list(n.preempted_host_node_names_json),
  }
}

/** The publishers of nodes, rendered as everyone sees them (no emails). */
export async function renderNodePublishers(db: Store, ids: readonly string[]): Promise<PublisherJson[]> {
  return renderPublishers(db, await listPublishersByIds(db, [...ids]))
}
