/** The signed PUT of an archive: verify the URL, stream to disk, check the archive, then commit its rows. */
import { inspectArchive } from '../archive/inspect'
import { mediaType } from '../blobs/signing'
import { normalizeSemver } from '../domain/semver'
import type { VersionJson } from '../domain/wire'
import { conflict, forbidden, notFound, payloadTooLarge } from '../errors'
import { isUniqueViolation } from '../store/db'
import { findNode } from '../store/nodes'
import { findArchive, findVersion, insertArchive, insertHostNodes, updateVersion } from '../store/versions'
import { nodesChanged } from './changes'
import { timestamp, type Deps } from './deps'
import { refreshLatest } from './latest'
import { versionJson } from './views'

export interface UploadRequest {
  method: string
  /** The request path exactly as received (percent-encoded), which the signature covers. */
  path: string
  nodeId: string
  version: string
  contentType: string | undefined
  contentLength: string | undefined
  expires: string | undefined
  signature: string | undefined
  body: ReadableStream<Uint8Array> | null
}

function verifySignedUrl(deps: Deps, req: UploadRequest): void {
  const expires = Number(req.expires)
  if (!req.signature || !Number.isSafeInteger(expires)) {
    throw forbidden('archive uploads need a signed URL: create a version to get one', 'invalid_signature')
  }
  const signed = { method: req.method, path: req.path, contentType: mediaType(req.contentType), expires }
  if (!deps.signer.verify(signed, req.signature)) {
    if (req.method !== 'PUT') throw forbidden('this signed URL accepts only PUT', 'invalid_signature')
    if (signed.contentType !== 'application/zip') {
      throw forbidden('this signed URL requires Content-Type: application/zip', 'invalid_signature')
    }
    throw forbidden('the signature does not match this URL', 'invalid_signature')
  }
  if (expires * 1000 < deps.now().getTime()) throw forbidden('this signed URL has expired', 'signature_expired')
}

export async function receiveArchive(deps: Deps, req: UploadRequest): Promise<VersionJson> {
  verifySignedUrl(deps, req)
  const max = deps.settings.maxUploadBytes
  if (req.contentLength !== undefined && Number(req.contentLength) > max) {
    throw payloadTooLarge(`archive is larger than the limit of ${max} bytes`)
  }
  const node = await findNode(deps.db, req.nodeId)
  const version = node && (await findVersion(deps.db, node.id, normalizeSemver(req.version) ?? req.version))
  if (!node || !version) throw notFound(`version ${req.version} of node "${req.nodeId}" not found`)
  const alreadyUploaded = () => conflict(`an archive for version ${version.version} was already uploaded`, 'archive_exists')
  if (await findArchive(deps.db, version.id)) throw alreadyUploaded()

  const blob = await deps.blobs.put(req.body ?? new Blob([]).stream(), max)
  const inspection = await inspectArchive(blob.path, deps.settings.archiveLimits)
  const now = timestamp(deps)
  try {
    await deps.db.transaction().execute(async (trx) => {
      const format = inspection.format ?? 'zip'
      await insertArchive(trx, { version_id: version.id, sha256: blob.sha256, size_bytes: blob.size, format, created_at: now })
      if (inspection.ok) await insertHostNodes(trx, version.id, inspection.hostNodes)
      // An admin may have moderated the version meanwhile; only a pending version moves on.
      const status =
        version.status !== 'pending' ? version.status : !inspection.ok ? 'flagged' : deps.settings.autoApprove ? 'active' : 'pending'
      await updateVersion(
        trx,
        version.id,
        {
          status,
          status_reason: inspection.ok ? version.status_reason : `invalid archive: ${inspection.reason}`,
          host_node_extract_status: inspection.ok ? 'success' : 'failed',
        },
        now,
      )
      await refreshLatest(trx, node.id, now)
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyUploaded()
    throw err
  }
  await nodesChanged(deps, [node.id])
  deps.log.info('archive.stored', { node: node.id, version: version.version, bytes: blob.size, valid: inspection.ok })
  const updated = await findVersion(deps.db, node.id, version.version)
  return versionJson(updated!, node, { publicUrl: deps.settings.publicUrl, hasArchive: true })
}
