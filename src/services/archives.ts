/** Finding the stored archive of a version for download, under the same rules as install. */
import { normalizeSemver } from '../domain/semver'
import { AppError, notFound } from '../errors'
import type { NodeHead } from '../store/nodes'
import type { ArchiveRow, VersionRow } from '../store/schema'
import { findArchive, findVersion } from '../store/versions'
import type { Actor } from './access'
import type { Deps } from './deps'
import { fetchOnFirstDownload } from './mirror/archives'
import { checkArchiveAccess, requireNodeHead } from './nodes'

export type OpenedArchive = ArchiveRow & { bytes: Blob; node: NodeHead; versionRow: VersionRow }

/** The archive row and its bytes (and the rows they were found by); the publisher segment of the URL is not checked, so URLs survive a claim. */
export async function openArchive(deps: Deps, actor: Actor, nodeId: string, version: string): Promise<OpenedArchive> {
  const node = await requireNodeHead(deps, nodeId)
  const row = await findVersion(deps.db, node.id, normalizeSemver(version) ?? version)
  const missing = () => notFound(`no archive for version ${version} of node "${node.id}"`)
  if (!row || row.status === 'deleted') throw missing()
  await checkArchiveAccess(deps, actor, node, row)
  // A mirrored archive not stored yet is fetched from its upstream now, once.
  const archive =
    (await findArchive(deps.db, row.id)) ?? ((await fetchOnFirstDownload(deps, row.id)) ? await findArchive(deps.db, row.id) : undefined)
  if (!archive) throw missing()
  const bytes = await deps.blobs.open(archive.sha256)
  if (!bytes) {
    deps.log.error('archive.missing', { node: node.id, version: row.version, sha256: archive.sha256 })
    throw new AppError(500, 'archive_missing', 'the archive bytes are missing from storage')
  }
  return { ...archive, bytes, node, versionRow: row }
}
