/** Finding the stored archive of a version for download. */
import { normalizeSemver } from '../domain/semver'
import { AppError, forbidden, notFound } from '../errors'
import type { ArchiveRow } from '../store/schema'
import { findArchive, findVersion } from '../store/versions'
import type { Deps } from './deps'
import { requireNode } from './nodes'

/** The archive and its file; the publisher segment of the URL is not checked, so URLs survive a claim. */
export async function openArchive(deps: Deps, nodeId: string, version: string): Promise<ArchiveRow & { path: string }> {
  const node = await requireNode(deps, nodeId)
  const row = await findVersion(deps.db, node.id, normalizeSemver(version) ?? version)
  const missing = () => notFound(`no archive for version ${version} of node "${node.id}"`)
  if (!row || row.status === 'deleted') throw missing()
  if (row.status === 'banned') throw forbidden(`version ${row.version} of node "${node.id}" is banned`, 'version_banned')
  const archive = await findArchive(deps.db, row.id)
  if (!archive) throw missing()
  const path = await deps.blobs.locate(archive.sha256)
  if (!path) {
    deps.log.error('archive.missing', { node: node.id, version: row.version, sha256: archive.sha256 })
    throw new AppError(500, 'archive_missing', 'the archive bytes are missing from storage')
  }
  return { ...archive, path }
}
