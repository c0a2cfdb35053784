/** Kysely table types; they follow schema.sql column for column. */
import type { Generated, Insertable, Selectable } from 'kysely'

export interface UserTable {
  id: string
  email: string
  name: string
  is_admin: number
  is_approved: number
  status: 'active' | 'banned'
  created_at: string
  updated_at: string
}

export interface AccessTokenTable {
  id: string
  token_hash: string
  token_prefix: Generated<string>
  user_id: string
  created_at: string
  expires_at: string | null
  last_used_at: string | null
  revoked_at: string | null
}

export interface PublisherTable {
  id: string
  name: string
  description: Generated<string>
  website: Generated<string>
  support: Generated<string>
  source_code_repo: Generated<string>
  logo: Generated<string>
  status: Generated<'active' | 'banned'>
  created_at: string
  updated_at: string
  /** Set when the publisher was deleted (a tombstone). */
  deleted_at: Generated<string | null>
  /** Mirrored entities: the upstream it comes from (null: local); see MirrorColumns. */
  mirror_source_id: Generated<string | null>
  mirror_status: Generated<string>
  mirror_checked_at: Generated<string>
}

export interface PublisherMemberTable {
  publisher_id: string
  user_id: string
  role: 'owner' | 'member'
  created_at: string
  /** A UUID v4 of its own, shown as `members[].id` (schema version 14). */
  id: string
}

export interface PublisherTokenTable {
  id: string
  publisher_id: string
  name: string
  description: string
  token_hash: string
  token_prefix: string
  created_at: string
}

export interface NodeTable {
  id: string
  normalized_id: string
  publisher_id: string
  name: string
  description: Generated<string>
  author: Generated<string>
  license: Generated<string>
  icon: Generated<string>
  banner_url: Generated<string>
  repository: Generated<string>
  repository_key: Generated<string>
  category: Generated<string>
  tags_json: Generated<string>
  tags_admin_json: Generated<string>
  supported_os_json: Generated<string>
  supported_accelerators_json: Generated<string>
  os_keys: Generated<string>
  accelerator_keys: Generated<string>
  supported_hostui_version: Generated<string>
  supported_hostui_frontend_version: Generated<string>
  preempted_host_node_names_json: Generated<string>
  translations_json: Generated<string>
  repohost_stars: Generated<number>
  search_ranking: Generated<number>
  review_count: Generated<number>
  star_total: Generated<number>
  status: Generated<'active' | 'banned' | 'deleted'>
  status_detail: Generated<string>
  latest_version_id: Generated<string | null>
  latest_version_status: Generated<VersionStatus | null>
  created_at: string
  updated_at: string
  /** 1 when the node is banned because its publisher was. */
  banned_with_publisher: Generated<number>

  mirrored_rating: Generated<number | null>

  mirror_source_id: Generated<string | null>
  mirror_status: Generated<string>
  /** The publisher the upstream last gave it: a node whose owner differs was claimed here. */
  mirror_owner: Generated<string>
  mirror_checked_at: Generated<string>
}

/**
 * A node's download count in a narrow row: a count rewrites this row only (schema.sql says what each column holds).
 * Every node has one; its search_ranking is a copy of the node's, written with it.
 */
export interface NodeDownloadsTable {
  node_id: string
  search_ranking: Generated<number>
  downloads: Generated<number>
  serial: Generated<number | null>
  changed_at: Generated<string | null>
}

/** A node's rendered JSON, less what changes apart from it (schema.sql says what each column holds). */
export interface NodeDocumentTable {
  node_id: string
  format: number
  publisher_id: string
  latest_version_id: string | null
  node_json: string
  version_json: string | null
  download_path: Generated<string>
}

/** A node's searched text in a narrow row (schema.sql says what it holds). */
export interface NodeSearchKeywordsTable {
  node_id: string
  text: string
}

/** The host node names of a node's latest version in a narrow row. */
export interface NodeSearchHostNamesTable {
  node_id: string
  names: string
}

export type VersionStatus = 'active' | 'banned' | 'deleted' | 'pending' | 'flagged'

export interface NodeVersionTable {
  id: string
  node_id: string
  version: string
  changelog: Generated<string>
  dependencies_json: Generated<string>
  deprecated: Generated<number>
  status: Generated<VersionStatus>
  status_reason: Generated<string>
  host_node_extract_status: Generated<'pending' | 'success' | 'failed'>
  supported_os_json: Generated<string>
  supported_accelerators_json: Generated<string>
  supported_hostui_version: Generated<string>
  supported_hostui_frontend_version: Generated<string>
  tags_json: Generated<string>
  tags_admin_json: Generated<string>
  created_at: string
  updated_at: string

  mirror_source_id: Generated<string | null>
  mirror_status: Generated<string>
  mirror_checked_at: Generated<string>
  /** When the version's host node names were asked for (the public registry serves them separately). */
  mirror_host_nodes_at: Generated<string | null>
}

export interface ArchiveTable {
  version_id: string
  sha256: string
  size_bytes: number
  format: 'zip' | 'tar.gz'
  created_at: string
}

export interface HostNodeTable {
  version_id: string
  name: string
}

export interface ReviewTable {
  node_id: string
  reviewer: string
  star: number
  created_at: string
  updated_at: string
}

export interface RegistryInstanceTable {
  id: number
  instance_id: string
  last_serial: number
  created_at: string
}

export type ChangeKind = 'publisher' | 'node' | 'version'

export interface ChangeTable {
  serial: number
  kind: ChangeKind
  entity_id: string
  changed_at: string
}

export interface AuditLogTable {
  id: Generated<number>
  at: string
  actor_id: string | null
  actor_address: string
  action: string
  target_kind: string
  target_id: string
  before_json: string | null
  after_json: string | null
}

export interface UploadClaimTable {
  version_id: string
  claimed_at: string
}

export interface VideoTaskTable {
  id: string
  task_id: string
  /** `user:<id>`, or `addr:<client address>` for an anonymous caller of an open proxy. */
  caller: string
  state: string
  err_code: Generated<string>
  credits: Generated<number>
  request_json: string
  /** SHA-256 of the secret in the callback URL given to the provider; null when the caller's own callback_url was. */
  callback_secret_hash: string | null
  created_at: string
  updated_at: string
}

export type StagedImageState = 'pending' | 'uploading' | 'ready'

export interface StagedImageTable {
  id: string
  caller: string
  file_name: string
  content_type: string | null
  state: Generated<StagedImageState>
  media_type: string | null
  sha256: string | null
  size_bytes: number | null
  created_at: string
  uploaded_at: string | null
}

export type MirrorSourceKind = 'feed' | 'public' | 'bundle'
export type ArchiveMode = 'none' | 'eager' | 'lazy'

export interface MirrorSourceTable {
  id: string
  kind: MirrorSourceKind
  upstream_instance: Generated<string>
  cursor_serial: Generated<number>
  cursor_time: Generated<string>
  archives: Generated<ArchiveMode>
  runs_since_full: Generated<number>
  full_pass_started_at: string | null
  last_attempt_at: string | null
  last_success_at: string | null
  last_error: Generated<string>
  last_summary_json: Generated<string>
  created_at: string
}

/**
 * Where a mirrored publisher, node or version came from, on its own row: the upstream (null for a local
 * entity), the status the upstream last gave it (a row whose status differs was moderated here and keeps it),
 * and the mark of the last full pass that saw it, or when a sync last wrote it (a completed full pass removes
 * what it did not see).
 */
export type MirrorColumns = 'mirror_source_id' | 'mirror_status' | 'mirror_checked_at'

export interface MirrorArchiveTable {
  version_id: string
  source_id: string
  url: string
  sha256: string | null
  size_bytes: number | null
  etag: string | null
  problem: Generated<string>
  problem_at: string | null
}

export interface RegistrySecretTable {
  name: string
  value: string
  created_at: string
}

export interface RateLimitTable {
  key: string
  window_started_at: string
  count: number
}

/** Bytes a writer is about to make visible or bind a row to (store/blob-intents.ts). */
export interface BlobIntentTable {
  id: string
  sha256: string
  created_at: string
}

export interface DB {
  users: UserTable
  access_tokens: AccessTokenTable
  publishers: PublisherTable
  publisher_members: PublisherMemberTable
  publisher_tokens: PublisherTokenTable
  nodes: NodeTable
  node_downloads: NodeDownloadsTable
  node_documents: NodeDocumentTable
  node_search_keywords: NodeSearchKeywordsTable
  node_search_host_names: NodeSearchHostNamesTable
  node_versions: NodeVersionTable
  archives: ArchiveTable
  host_nodes: HostNodeTable
  reviews: ReviewTable
  registry_instance: RegistryInstanceTable
  changes: ChangeTable
  audit_log: AuditLogTable
  upload_claims: UploadClaimTable
  video_tasks: VideoTaskTable
  staged_images: StagedImageTable

  mirror_sources: MirrorSourceTable
  mirror_archives: MirrorArchiveTable
  blob_intents: BlobIntentTable
  registry_secrets: RegistrySecretTable
  rate_limits: RateLimitTable
}

export type UserRow = Selectable<UserTable>
export type AccessTokenRow = Selectable<AccessTokenTable>
export type PublisherRow = Selectable<PublisherTable>
export type MemberRow = Selectable<PublisherMemberTable>
export type PublisherTokenRow = Selectable<PublisherTokenTable>
/** A node as read: its row, and its download count from its narrow row (store/nodes.ts `selectNodes`). */
export type NodeRow = Selectable<NodeTable> & { downloads: number }
export type VersionRow = Selectable<NodeVersionTable>
export type NewVersionRow = Insertable<NodeVersionTable>
export type ArchiveRow = Selectable<ArchiveTable>
export type ChangeRow = Selectable<ChangeTable>
export type VideoTaskRow = Selectable<VideoTaskTable>
export type StagedImageRow = Selectable<StagedImageTable>

export type MirrorSourceRow = Selectable<MirrorSourceTable>
export type MirrorArchiveRow = Selectable<MirrorArchiveTable>
