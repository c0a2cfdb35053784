/**
 * The JSON shapes real clients read, as valibot schemas (the OpenAPI document and the checks of upstream
 * replies use them; the TypeScript types follow from them): the seed's field names, and beside them the
 * upstream's spellings of the same values, which real clients read.
 */
import * as v from 'valibot'

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

const values = <T extends Record<string, string>>(o: T) => Object.values(o) as [T[keyof T], ...T[keyof T][]]
const dateTime = v.pipe(v.string(), v.isoTimestamp())
const strings = v.array(v.string())

export const UserSchema = v.object({ id: v.string(), email: v.string(), name: v.string(), isAdmin: v.boolean(), isApproved: v.boolean() })

export const MemberSchema = v.object({
  id: v.string(),
  role: v.picklist(['owner', 'member']),
  user: v.object({ id: v.string(), name: v.string(), email: v.optional(v.string()) }),
})

export const PublisherSchema = v.object({
  id: v.string(),
  name: v.string(),
  description: v.string(),
  website: v.string(),
  support: v.string(),
  source_code_repo: v.string(),
  logo: v.string(),
  createdAt: dateTime,
  status: v.picklist(values(PUBLISHER_STATUS)),
  members: v.array(MemberSchema),
})

export const VersionSchema = v.object({
  id: v.string(),
  node_id: v.string(),
  version: v.string(),
  changelog: v.string(),
  dependencies: strings,
  deprecated: v.boolean(),
  status: v.picklist(values(VERSION_STATUS)),
  status_reason: v.string(),
  host_node_extract_status: v.string(),
  createdAt: dateTime,
  downloadUrl: v.string(),
  supported_os: strings,
  supported_accelerators: strings,
  supported_hostui_version: v.string(),
  supported_hostui_frontend_version: v.string(),
  tags: strings,
  tags_admin: strings,
  // The upstream's spellings (the host application's front end checks compatibility from these).
  comfy_node_extract_status: v.string(),
  supported_comfyui_version: v.string(),
  supported_comfyui_frontend_version: v.string(),
})

export const NodeSchema = v.object({
  id: v.string(),
  name: v.string(),
  description: v.string(),
  author: v.string(),
  license: v.string(),
  icon: v.string(),
  banner_url: v.string(),
  repository: v.string(),
  category: v.string(),
  tags: strings,
  tags_admin: strings,
  downloads: v.number(),
  rating: v.number(),
  repohost_stars: v.number(),
  search_ranking: v.number(),
  status: v.picklist(values(NODE_STATUS)),
  status_detail: v.string(),
  supported_os: strings,
  supported_accelerators: strings,
  supported_hostui_version: v.string(),
  supported_hostui_frontend_version: v.string(),
  preempted_host_node_names: strings,
  translations: v.record(v.string(), v.unknown()),
  created_at: dateTime,
  // The upstream's spellings.
  github_stars: v.number(),
  supported_comfyui_version: v.string(),
  supported_comfyui_frontend_version: v.string(),
  preempted_comfy_node_names: strings,
  publisher: v.optional(PublisherSchema),
  latest_version: v.optional(VersionSchema),
})

export const NodePageSchema = v.object({
  nodes: v.array(NodeSchema),
  page: v.number(),
  limit: v.number(),
  total: v.number(),
  totalPages: v.number(),
})

export type VersionStatusName = (typeof VERSION_STATUS)[keyof typeof VERSION_STATUS]
export type UserJson = v.InferOutput<typeof UserSchema>
export type MemberJson = v.InferOutput<typeof MemberSchema>
export type PublisherJson = v.InferOutput<typeof PublisherSchema>
export type VersionJson = v.InferOutput<typeof VersionSchema>
export type NodeJson = v.InferOutput<typeof NodeSchema>
export type NodePage = v.InferOutput<typeof NodePageSchema>

// The video proxy (the upstream's Vidu shapes). The host application's video node requires task_id, state and
// created_at of a start, and state and a creations list (each with id, url and cover_url) of every poll.

export const VIDEO_STATES = ['created', 'processing', 'queueing', 'success', 'failed'] as const
export const VIDEO_CHOICES = {
  aspect_ratio: ['16:9', '9:16', '1:1'],
  resolution: ['360p', '540p', '720p', '1080p'],
  movement_amplitude: ['auto', 'small', 'medium', 'large'],
  style: ['general', 'anime'],
} as const

export const VideoTaskSchema = v.object({
  task_id: v.string(),
  state: v.string(),
  credits: v.number(),
  created_at: v.string(),
  /** The provider's error code, when it failed the task at once. */
  code: v.optional(v.number()),
  model: v.string(),
  images: strings,
  prompt: v.optional(v.string()),
  duration: v.optional(v.number()),
  seed: v.optional(v.number()),
  aspect_ratio: v.optional(v.string()),
  resolution: v.optional(v.string()),
  movement_amplitude: v.optional(v.string()),
  style: v.optional(v.string()),
  callback_url: v.optional(v.string()),
  priority: v.optional(v.number()),
  enhance: v.optional(v.boolean()),
})

export const VideoCreationSchema = v.object({
  id: v.string(),
  url: v.string(),
  cover_url: v.string(),
  watermarked_url: v.optional(v.string()),
})

export const VideoCreationsSchema = v.object({
  id: v.string(),
  state: v.string(),
  err_code: v.string(),
  credits: v.number(),
  progress: v.optional(v.number()),
  creations: v.array(VideoCreationSchema),
})

export const StagedImageUrlsSchema = v.object({ upload_url: v.string(), download_url: v.string() })

export type VideoTaskJson = v.InferOutput<typeof VideoTaskSchema>
export type VideoCreationsJson = v.InferOutput<typeof VideoCreationsSchema>
export type StagedImageUrls = v.InferOutput<typeof StagedImageUrlsSchema>
