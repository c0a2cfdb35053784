/**
 * What a mirror applies: publishers, nodes and versions in our own terms, whichever upstream they came from
 * (another registry-mirror's feed, the public registry, a bundle), and tombstones. Also the mapping from an
 * upstream's validated JSON (either spelling) to these items.
 */
import { normalizeSemver } from './semver'
import { normalizeTime } from './timestamps'
import type { Loose, UpstreamNode, UpstreamPublisher, UpstreamVersion } from './upstream-wire'
import { NODE_STATUS, PUBLISHER_STATUS, VERSION_STATUS } from './wire'
import { MAX_STORED_INT } from './stored-int'

export type EntityKind = 'publisher' | 'node' | 'version'
type VersionStatus = keyof typeof VERSION_STATUS

export interface PublisherItem {
  id: string
  name: string
  description: string
  website: string
  support: string
  source_code_repo: string
  logo: string
  status: 'active' | 'banned'
  /** '' when the upstream gives none (or no readable one): the stored time stays, a new row gets now. */
  created_at: string
}

export interface NodeItem {
  id: string
  publisher_id: string
  name: string
  description: string
  author: string
  license: string
  icon: string
  banner_url: string
  repository: string
  category: string
  tags: string[]
  tags_admin: string[]
  supported_os: string[]
  supported_accelerators: string[]
  supported_hostui_version: string
  supported_hostui_frontend_version: string
  preempted_host_node_names: string[]
  translations: Record<string, unknown>
  repohost_stars: number
  search_ranking: number
  downloads: number
  rating: number
  status: 'active' | 'banned' | 'deleted'
  status_detail: string
  /** As PublisherItem's. */
  created_at: string
}

export interface VersionItem {
  id: string
  node_id: string
  version: string
  changelog: string
  dependencies: string[]
  deprecated: boolean
  status: VersionStatus
  status_reason: string
  host_node_extract_status: 'pending' | 'success' | 'failed'
  supported_os: string[]
  supported_accelerators: string[]
  supported_hostui_version: string
  supported_hostui_frontend_version: string
  tags: string[]
  tags_admin: string[]
  /** As PublisherItem's. */
  created_at: string
  /** Where the upstream serves the archive ('' when it has none). */
  archiveUrl: string
  /** The archive's SHA-256 when the upstream announces it (another registry-mirror does). */
  archiveSha256?: string
  /** Host node class names, when the upstream sent them with the version. */
  hostNodes?: string[]
}

export type MirrorItem =
  | { kind: 'publisher'; data: PublisherItem }
  /** `publisher` is the node's embedded publisher: used when that publisher is not here yet. */
  | { kind: 'node'; data: NodeItem; publisher?: PublisherItem }
  | { kind: 'version'; data: VersionItem }
  /** Gone upstream: deleted, or no longer there at all. */
  | { kind: EntityKind; tombstone: true; id: string }

/** A problem with one item: reported, and the item skipped. */
export interface ItemProblem {
  kind: EntityKind | 'archive' | 'page'
  id: string
  reason: string
}

const str = (o: Loose, ...keys: string[]): string => {
  for (const k of keys) if (typeof o[k] === 'string') return o[k] as string
  return ''
}
const list = (o: Loose, ...keys: string[]): string[] => {
  for (const k of keys) if (Array.isArray(o[k])) return o[k] as string[]
  return []
}
const num = (o: Loose, ...keys: string[]): number => {
  for (const k of keys) if (typeof o[k] === 'number') return o[k] as number
  return 0
}
/** A rating: the mean of reviews of 1 to 5 stars, 0 for none; any other number reads as 0, like a missing one. */
const stars = (rating: number) => (rating >= 0 && rating <= 5 ? rating : 0)
/**
 * A counter (downloads, stars, ranking): a non-negative safe integer, as a fixture requires; any other number
 * (a fraction, a negative one, 1e308) is as unreadable as a missing one and reads as 0. One past what the store's
 * columns hold is kept at their top: written as it came, it failed the whole batch on PostgreSQL.
 */
const count = (o: Loose, ...keys: string[]) => {
  const n = num(o, ...keys)
  return Number.isSafeInteger(n) && n >= 0 ? Math.min(n, MAX_STORED_INT) : 0
}

/** Our status for each of its names (either `NodeStatusActive` or `active`), lower-cased. */
const statusNames = <T extends string>(names: Record<T, string>): ReadonlyMap<string, T> =>
  new Map(
    (Object.entries(names) as [T, string][]).flatMap(([short, full]) => [[full.toLowerCase(), short] as const, [short, short] as const]),
  )

/** A status name to ours; an unknown one becomes `fallback`. */
const status = <T extends string>(names: ReadonlyMap<string, T>, value: string, fallback: T): T =>
  names.get(value.toLowerCase()) ?? fallback
const PUBLISHER_NAMES = statusNames(PUBLISHER_STATUS)
const NODE_NAMES = statusNames(NODE_STATUS)
const VERSION_NAMES = statusNames(VERSION_STATUS)
const EXTRACT_NAMES = statusNames({ pending: 'pending', success: 'success', failed: 'failed' } as const)

export function publisherItem(p: UpstreamPublisher): PublisherItem {
  return {
    id: p.id,
    name: str(p, 'name') || p.id,
    description: str(p, 'description'),
    website: str(p, 'website'),
    support: str(p, 'support'),
    source_code_repo: str(p, 'source_code_repo'),
    logo: str(p, 'logo'),
    status: status(PUBLISHER_NAMES, str(p, 'status'), 'active'),
    created_at: normalizeTime(p.createdAt, ''),
  }
}

export function nodeItem(n: UpstreamNode, publisherId: string): NodeItem {
  const translations = n.translations
  return {
    id: n.id,
    publisher_id: publisherId,
    name: str(n, 'name') || n.id,
    description: str(n, 'description'),
    author: str(n, 'author'),
    license: str(n, 'license'),
    icon: str(n, 'icon'),
    banner_url: str(n, 'banner_url'),
    repository: str(n, 'repository'),
    category: str(n, 'category'),
    tags: list(n, 'tags'),
    tags_admin: list(n, 'tags_admin'),
    supported_os: list(n, 'supported_os'),
    supported_accelerators: list(n, 'supported_accelerators'),
    supported_hostui_version: str(n, 'supported_hostui_version', 'supported_comfyui_version'),
    supported_hostui_frontend_version: str(n, 'supported_hostui_frontend_version', 'supported_comfyui_frontend_version'),
    preempted_host_node_names: list(n, 'preempted_host_node_names', 'preempted_comfy_node_names'),
    translations: translations && typeof translations === 'object' ? (translations as Record<string, unknown>) : {},
    repohost_stars: count(n, 'repohost_stars', 'github_stars'),
    search_ranking: count(n, 'search_ranking'),
    downloads: count(n, 'downloads'),
    rating: stars(num(n, 'rating')),
    status: status(NODE_NAMES, str(n, 'status'), 'active'),
    status_detail: str(n, 'status_detail'),
    created_at: normalizeTime(n.created_at, ''),
  }
}

export function versionItem(v: UpstreamVersion, nodeId: string): VersionItem {
  return {
    id: v.id.toLowerCase(),
    node_id: nodeId,
    // Stored in the normal form our lookups use (`v1.2` -> `1.2.0`); anything else as sent.
    version: normalizeSemver(v.version) ?? v.version,
    changelog: str(v, 'changelog'),
    dependencies: list(v, 'dependencies'),
    deprecated: v.deprecated === true,
    status: status(VERSION_NAMES, str(v, 'status'), 'pending'),
    status_reason: str(v, 'status_reason'),
    host_node_extract_status: status(EXTRACT_NAMES, str(v, 'host_node_extract_status', 'comfy_node_extract_status'), 'pending'),
    supported_os: list(v, 'supported_os'),
    supported_accelerators: list(v, 'supported_accelerators'),
    supported_hostui_version: str(v, 'supported_hostui_version', 'supported_comfyui_version'),
    supported_hostui_frontend_version: str(v, 'supported_hostui_frontend_version', 'supported_comfyui_frontend_version'),
    tags: list(v, 'tags'),
    tags_admin: list(v, 'tags_admin'),
    created_at: normalizeTime(v.createdAt, ''),
    archiveUrl: /^https?:\/\//i.test(str(v, 'downloadUrl')) ? str(v, 'downloadUrl') : '',
  }
}
