/** The JSON shapes real clients read, with the seed's field names and enumeration strings. */

export const NODE_STATUS = {
  active: 'NodeStatusActive',
  banned: 'NodeStatusBanned',
  deleted: 'NodeStatusDeleted',
} as const

export const VERSION_STATUS = {
  active: 'NodeVersionStatusActive',
  banned: 'NodeVersionStatusBanned',
  deleted: 'NodeVersionStatusDeleted',
  pending: 'NodeVersionStatusPending',
  flagged: 'NodeVersionStatusFlagged',
} as const

export const PUBLISHER_STATUS = {
  active: 'PublisherStatusActive',
  banned: 'PublisherStatusBanned',
} as const

export type VersionStatusName = (typeof VERSION_STATUS)[keyof typeof VERSION_STATUS]

export interface UserJson {
  id: string
  email: string
  name: string
  isAdmin: boolean
  isApproved: boolean
}

export interface MemberJson {
  id: string
  role: 'owner' | 'member'
  user: { id: string; name: string; email?: string }
}

export interface PublisherJson {
  id: string
  name: string
  description: string
  website: string
  support: string
  source_code_repo: string
  logo: string
  createdAt: string
  status: (typeof PUBLISHER_STATUS)[keyof typeof PUBLISHER_STATUS]
  members: MemberJson[]
}

export interface VersionJson {
  id: string
  node_id: string
  version: string
  changelog: string
  dependencies: string[]
  deprecated: boolean
  status: VersionStatusName
  status_reason: string
  host_node_extract_status: string
  createdAt: string
  downloadUrl: string
  supported_os: string[]
  supported_accelerators: string[]
  supported_hostui_version: string
  supported_hostui_frontend_version: string
  tags: string[]
  tags_admin: string[]
}

export interface NodeJson {
  id: string
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
  downloads: number
  rating: number
  repohost_stars: number
  search_ranking: number
  status: (typeof NODE_STATUS)[keyof typeof NODE_STATUS]
  status_detail: string
  supported_os: string[]
  supported_accelerators: string[]
  supported_hostui_version: string
  supported_hostui_frontend_version: string
  preempted_host_node_names: string[]
  translations: Record<string, unknown>
  created_at: string
  publisher?: PublisherJson
  latest_version?: VersionJson
}

export interface NodePage {
  nodes: NodeJson[]
  page: number
  limit: number
  total: number
  totalPages: number
}
