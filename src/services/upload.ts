/**
 * The signed PUT of an archive: verify the URL, claim the version (single use from the first byte), stage
 * the bytes, inspect them off the event loop, then make them visible and commit the rows together.
 */
import { inspectArchive } from '../archive/inspect'
import type { StagedBlob } from '../blobs/blob-store'
import { mediaType, readSignedQuery } from '../blobs/signing'
import { normalizeSemver } from '../domain/semver'
import type { VersionJson } from '../domain/wire'
import { conflict, forbidden, nodeBanned, notFound, payloadTooLarge } from '../errors'
import { isDatabaseUnavailable } from '../store/db'
import { findNode } from '../store/nodes'
import { findPublisher } from '../store/publishers'
import { lockVersion } from '../store/row-locks'
import type { NodeRow, VersionRow } from '../store/schema'
import { claimUpload, renewUpload } from '../store/uploads'
import { findArchive, findVersion, findVersionById, insertArchive, insertHostNodes, updateVersion } from '../store/versions'
import { underBlobIntent, type HeldIntent } from './blob-intent'
import { releaseClaim } from './claim-release'
import { timestamp, type Deps } from './deps'
import { refreshLatest } from './latest'
import { versionJson } from './views'
import { inWriteTurn } from './write-turn'

export interface UploadRequest {
  method: string
  /** The request path exactly as received (percent-encoded), which the signature covers. */
  path: string
  nodeId: string
  version: string
  contentType: string | undefined
  contentLength: string | undefined
  /** The request's query string, which must hold the signed `expires` and `signature` and nothing else. */
  query: string
  body: ReadableStream<Uint8Array> | null
}

function verifySignedUrl(deps: Deps, req: UploadRequest): void {
  const query = readSignedQuery(req.query)
  const expires = query.expires
  if (!query.signature || expires === undefined) {
    throw forbidden('archive uploads need a signed URL: create a version to get one', 'invalid_signature')
  }
  if (query.altered) throw forbidden('the signature does not match this URL (a query parameter was added or repeated)', 'invalid_signature')
  const signed = { method: req.method, path: req.path, contentType: mediaType(req.contentType), expires }
  if (!deps.signer.verify(signed, query.signature)) {
    if (req.method !== 'PUT') throw forbidden('this signed URL accepts only PUT', 'invalid_signature')
    if (signed.contentType !== 'application/zip') {
      throw forbidden('this signed URL requires Content-Type: application/zip', 'invalid_signature')
    }
    throw forbidden('the signature does not match this URL', 'invalid_signature')
  }
  if (expires * 1000 < deps.now().getTime()) throw forbidden('this signed URL has expired', 'signature_expired')
}

/**
 * A ban of the node or its publisher, or a deletion of the node or the version, also one that came after the
 * URL was issued, refuses the upload.
 */
async function checkStillOpen(db: Deps['db'], node: NodeRow, versionId: string): Promise<void> {
  const current = await findNode(db, node.id)
  const version = await findVersionById(db, versionId)
  if (!current || current.status === 'deleted' || !version || version.status === 'deleted') {
    throw notFound(`version ${version?.version ?? versionId} of node "${node.id}" not found`)
  }
  if (current.status === 'banned' || (await findPublisher(db, current.publisher_id))?.status === 'banned') throw nodeBanned()
}

const alreadyUploaded = (version: string) =>
  conflict(`an archive for version ${version} was already uploaded through this signed URL`, 'archive_exists')

export async function receiveArchive(deps: Deps, req: UploadRequest): Promise<VersionJson> {
  verifySignedUrl(deps, req)
  const max = deps.settings.maxUploadBytes
  if (req.contentLength !== undefined && Number(req.contentLength) > max) {
    throw payloadTooLarge(`archive is larger than the limit of ${max} bytes`)
  }
  const node = await findNode(deps.db, req.nodeId)
  const version = node && (await findVersion(deps.db, node.id, normalizeSemver(req.version) ?? req.version))
  if (!node || !version) throw notFound(`version ${req.version} of node "${req.nodeId}" not found`)
  await checkStillOpen(deps.db, node, version.id)
  if (await findArchive(deps.db, version.id)) throw alreadyUploaded(version.version)
  // Refused at once, before a byte of the body is read: the first PUT holds the version until it ends.
  // In a write turn, as commitWrite's writes (services/write-turn.ts): after the download writer thread's batch, on a
  // promise, rather than polling the lock while the thread commits.
  const staleBefore = new Date(deps.now().getTime() - CLAIM_STALE_MS).toISOString()
  const claimedAt = timestamp(deps)
  const claimed = await inWriteTurn(deps.db, () => claimUpload(deps.db, version.id, claimedAt, staleBefore)).catch(async (err) => {
    // The claim may have been inserted before the connection went (its answer lost): freed once the database is
    // back, or every retry of this URL would find it and be refused for two minutes. Only this claim, by its time.
    if (isDatabaseUnavailable(err)) await releaseClaim(deps, version.id, [claimedAt])
    throw err
  })
  if (!claimed) {
    throw conflict(`an upload of version ${version.version} is already in progress or done`, 'upload_in_progress')
  }
  const renewing = keepClaim(deps, version.id, CLAIM_RENEW_MS, claimedAt)
  let staged: StagedBlob | undefined
  try {
    staged = await deps.blobs.stage(req.body ?? new Blob([]).stream(), max)
    const stored = await storeArchive(deps, node, version, staged)
    deps.log.info('archive.stored', {
      node: node.id,
      version: version.version,
      bytes: staged.size,
      status: stored.status,
      reason: stored.status === 'flagged' ? stored.status_reason : undefined,
    })
    deps.metrics.uploads.inc({ outcome: stored.status })
    deps.metrics.uploadBytes.inc(staged.size)
    return versionJson(stored, node, { publicUrl: deps.settings.publicUrl, hasArchive: true })
  } catch (err) {
    // A failed upload (cut off, too large, banned meanwhile) frees the URL for a retry while it is valid.
    await staged?.discard()
    await releaseClaim(deps, version.id, renewing.stamps)
    deps.metrics.uploads.inc({ outcome: 'failed' })
    throw err
  } finally {
    renewing.stop()
  }
}

/**
 * How often an upload under way renews its claim, and how old a claim must be to count as abandoned: a process
 * killed mid-upload (a crash, an OOM kill, a restart) never releases its claim, and until then every retry of the
 * still valid URL was 409 for an hour, after the URL had expired: a server crash burnt the version number. Four
 * renewals fit in the window, so a busy event loop or a clock a little apart between instances does not free a
 * live upload's claim; the URL is valid for 15 minutes, so a retry two minutes after a crash works.
 */
export const CLAIM_RENEW_MS = 30_000
export const CLAIM_STALE_MS = 2 * 60_000

/**
 * Renews the claim on `versionId` every `everyMs` until stopped (a failed renewal is logged; the next one retries).
 * `stamps` are the times written into the claim, `claimedAt` first: a renewal whose answer was lost may have landed.
 */
export function keepClaim(deps: Deps, versionId: string, everyMs = CLAIM_RENEW_MS, claimedAt?: string): { stop(): void; stamps: string[] } {
  const stamps = claimedAt ? [claimedAt] : []
  const timer = setInterval(() => {
    const now = timestamp(deps)
    stamps.push(now)
    inWriteTurn(deps.db, () => renewUpload(deps.db, versionId, now)).catch((err: Error) =>
      deps.log.warn('upload.claim_renew_failed', { error: err.message }),
    )
  }, everyMs)
  return { stop: () => clearInterval(timer), stamps }
}

async function storeArchive(deps: Deps, node: NodeRow, version: VersionRow, staged: StagedBlob): Promise<VersionRow> {
  const inspection = await inspectArchive(staged.localPath, deps.settings.archiveLimits)
  // Held from before the commit to the row: a sweep could otherwise delete identical bytes the commit found stored.
  return underBlobIntent(deps, [staged.sha256], async (intent) => {
    await staged.commit() // durable and visible under its hash before any row points at it
    return commitArchive(deps, node, version, staged, inspection, intent)
  })
}

async function commitArchive(
  deps: Deps,
  node: NodeRow,
  version: VersionRow,
  staged: StagedBlob,
  inspection: Awaited<ReturnType<typeof inspectArchive>>,
  intent: HeldIntent,
): Promise<VersionRow> {
  return intent.write(async (w) => {
    // Held before its status is read: an admin's moderation on another instance meanwhile is not overwritten.
    await lockVersion(w.db, version.id)
    await checkStillOpen(w.db, node, version.id)
    const current = (await findVersionById(w.db, version.id))!
    const format = inspection.format ?? 'zip'
    await insertArchive(w.db, { version_id: version.id, sha256: staged.sha256, size_bytes: staged.size, format, created_at: w.now })
    if (inspection.ok) await insertHostNodes(w.db, version.id, inspection.hostNodes)
    // An admin may have moderated the version meanwhile; only a pending version moves on.
    const status =
      current.status !== 'pending' ? current.status : !inspection.ok ? 'flagged' : deps.settings.autoApprove ? 'active' : 'pending'
    await updateVersion(
      w.db,
      version.id,
      {
        status,
        status_reason: inspection.ok ? current.status_reason : `invalid archive: ${inspection.reason}`,
        host_node_extract_status: inspection.ok ? 'success' : 'failed',
      },
      w.now,
    )
    await refreshLatest(w.db, node.id, w.now)
    w.version(version.id, node.id)
    return (await findVersionById(w.db, version.id))!
  })
}
