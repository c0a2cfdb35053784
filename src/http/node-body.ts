/** The node metadata clients send (publish's `node`, node creation and edits), and how it becomes the store's fields. */
import * as v from 'valibot'
import type { NodeFields } from '../store/nodes'
import { boundedObject } from '../domain/json-bounds'
import { defined, httpUrlOrEmpty, str, strList } from './fields'

const license = v.nullish(v.union([v.string(), boundedObject()], 'must be a string'))

/** Compatibility targets, sent in both `node` and `node_version` (with the upstream's spellings too). */
export const platformFields = {
  supported_os: strList(50, 200),
  supported_accelerators: strList(50, 200),
  supported_hostui_version: str(200),
  supported_comfyui_version: str(200),
  supported_hostui_frontend_version: str(200),
  supported_comfyui_frontend_version: str(200),
}

export const nodeEntries = {
  id: str(100),
  name: str(200),
  description: str(1000),
  author: str(200),
  license,
  icon: str(2000),
  banner_url: str(2000),
  // The node manager git-clones it for nightly installs and front ends link it: `--upload-pack=…`, `ext::…` or
  // `javascript:` would reach them as an argument or a link.
  repository: httpUrlOrEmpty(2000),
  category: str(200),
  tags: strList(50, 100),
  ...platformFields,
  preempted_host_node_names: strList(1000, 200),
  preempted_comfy_node_names: strList(1000, 200),
  translations: v.nullish(boundedObject('must be an object')),
}

export const NodeBody = v.object(nodeEntries)

type NodeInput = v.InferOutput<typeof NodeBody>

/** The fields that were sent (null counts as not sent), with the upstream's spellings read as ours. */
export function nodeFields(n: NodeInput): NodeFields & { id?: string } {
  const { supported_comfyui_version, supported_comfyui_frontend_version, preempted_comfy_node_names, license: lic, ...rest } = n
  return defined({
    ...rest,
    license: typeof lic === 'object' && lic !== null ? JSON.stringify(lic) : lic,
    supported_hostui_version: n.supported_hostui_version ?? supported_comfyui_version,
    supported_hostui_frontend_version: n.supported_hostui_frontend_version ?? supported_comfyui_frontend_version,
    preempted_host_node_names: n.preempted_host_node_names ?? preempted_comfy_node_names,
  })
}
