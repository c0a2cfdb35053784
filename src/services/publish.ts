/** Publishing a version: the publishing CLI's POST, which creates the node on first publish and hands out a signed upload URL. */
import { newId, nodeIdProblem } from '../domain/ids'
import { normalizeSemver } from '../domain/semver'
import { archivePath } from '../domain/urls'
import type { VersionJson } from '../domain/wire'
import { badRequest, conflict, nodeBanned, permissionDenied, invalidPublisherToken, unauthorized } from '../errors'
import { isUniqueViolation } from '../store/db'
import { findNode, insertNodeUnlessTaken, updateNodeFields, type NodeFields } from '../store/nodes'
import type { NodeRow, PublisherRow } from '../store/schema'
import { lockNodes } from '../store/row-locks'
import { findVersion, insertVersion } from '../store/versions'
import { type Actor, holdPublisherForNode, holdsRole, requireActiveUser, requireLocal, requirePublisher } from './access'
import { commitWrite } from './changes'
import type { Deps } from './deps'
import { refreshLatest } from './latest'
import { publisherTokenValid } from './publisher-tokens'
import { versionJson } from './views'

export interface VersionFields {
  version: string
  changelog?: string
  dependencies?: string[]
  supported_os?: string[]
  supported_accelerators?: string[]
  supported_hostui_version?: string
  supported_hostui_frontend_version?: string
  tags?: string[]
}

export interface PublishInput {
  publisherId: string
  nodeId: string
  personalAccessToken?: string
  node?: NodeFields & { id?: string }
  version: VersionFields
}

/** A sent personal_access_token is the credential, also an empty one (which matches none: 400, as upstream). */
async function checkCredential(deps: Deps, actor: Actor, publisher: PublisherRow, token: string | undefined) {
  if (token !== undefined) {
    if (!(await publisherTokenValid(deps, publisher.id, token))) throw invalidPublisherToken()
    return
  }
  if (!actor.user)
    throw unauthorized(actor.credentialProblem ?? 'Send a personal_access_token of the publisher, or Authorization: Bearer <token>')
  const user = requireActiveUser(actor)
  if (!(await holdsRole(deps.db, user, publisher.id, 'member'))) throw permissionDenied()
}

/** The existing node, after the checks a publish to it must pass. */
function checkExistingNode(node: NodeRow, input: PublishInput): NodeRow {
  if (node.id !== input.nodeId) {
    throw conflict(`node id "${input.nodeId}" clashes with existing node "${node.id}" (ids are unique ignoring case)`, 'node_exists')
  }
  if (node.status === 'banned') throw nodeBanned()
  if (node.publisher_id !== input.publisherId) throw permissionDenied()
  if (node.status === 'deleted') throw conflict(`node "${node.id}" was deleted`, 'node_deleted')
  return node
}

export async function publishVersion(
  deps: Deps,
  actor: Actor,
  input: PublishInput,
): Promise<{ node_version: VersionJson; signedUrl: string }> {
  const publisher = await requirePublisher(deps.db, input.publisherId)
  await checkCredential(deps, actor, publisher, input.personalAccessToken)
  if (publisher.status === 'banned') throw nodeBanned()
  if (input.node?.id !== undefined && input.node.id !== input.nodeId) {
    throw badRequest(`node.id "${input.node.id}" must equal the node id of the path, "${input.nodeId}"`)
  }
  const version = normalizeSemver(input.version.version)
  if (!version) throw badRequest(`node_version.version: "${input.version.version}" is not a semantic version`, 'invalid_version')
  const existing = await findNode(deps.db, input.nodeId)
  await requireLocal(deps.db, { publisherId: publisher.id, nodeId: existing?.id })
  if (existing) checkExistingNode(existing, input)
  else {
    const problem = nodeIdProblem(input.nodeId)
    if (problem) throw badRequest(problem, 'invalid_node_id')
  }

  const versionId = newId()
  const fields = input.node ?? {}
  const v = input.version
  try {
    await commitWrite(deps, async ({ db: trx, now, node, version: versionChanged }) => {
      // Deleted or banned on another instance since it was read above: refused, as it would have been then.
      await holdPublisherForNode(trx, publisher.id, nodeBanned)
      if (existing) {
        // Held and read again, for the same reason: deleted or banned on another instance since, it is refused.
        await lockNodes(trx, [existing.id])
        checkExistingNode((await findNode(trx, existing.id))!, input)
        await updateNodeFields(trx, existing.id, fields, now)
      } else if (!(await insertNodeUnlessTaken(trx, { id: input.nodeId, publisherId: publisher.id, fields, now }))) {
        // A publish sent at the same time created it since it was looked up: go on as if this one came after it.
        const taken = await findNode(trx, input.nodeId)
        if (!taken) throw conflict(`node "${input.nodeId}" already exists`, 'node_exists')
        await requireLocal(trx, { nodeId: taken.id })
        checkExistingNode(taken, input)
        await updateNodeFields(trx, taken.id, fields, now)
      }
      node(input.nodeId)
      if (await findVersion(trx, input.nodeId, version)) throw conflict('The node version already exists', 'version_exists')
      await insertVersion(trx, {
        id: versionId,
        node_id: input.nodeId,
        version,
        changelog: v.changelog ?? '',
        dependencies_json: JSON.stringify(v.dependencies ?? []),
        supported_os_json: JSON.stringify(v.supported_os ?? []),
        supported_accelerators_json: JSON.stringify(v.supported_accelerators ?? []),
        supported_hostui_version: v.supported_hostui_version ?? '',
        supported_hostui_frontend_version: v.supported_hostui_frontend_version ?? '',
        tags_json: JSON.stringify(v.tags ?? []),
        status: 'pending',
        host_node_extract_status: 'pending',
        created_at: now,
        updated_at: now,
      })
      await refreshLatest(trx, input.nodeId, now)
      versionChanged(versionId, input.nodeId)
    })
  } catch (err) {
    // The node is never inserted over another (above): what a publish sent at the same time took is its version.
    if (isUniqueViolation(err)) throw conflict('The node version already exists', 'version_exists')
    throw err
  }

  const path = archivePath(publisher.id, input.nodeId, version)
  const expires = Math.floor(deps.now().getTime() / 1000) + deps.settings.uploadUrlTtlSeconds
  const signedUrl = `${deps.settings.publicUrl}${path}?${deps.signer.sign({ method: 'PUT', path, contentType: 'application/zip', expires })}`
  const row = await findVersion(deps.db, input.nodeId, version)
  const node = { id: input.nodeId, publisher_id: publisher.id }
  return { node_version: versionJson(row!, node, { publicUrl: deps.settings.publicUrl, hasArchive: false }), signedUrl }
}
