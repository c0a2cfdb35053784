/** Where archives live on this server: one path for the signed upload and for downloads, under its own prefix. */

export const ARCHIVE_PREFIX = '/archives'

export function archivePath(publisherId: string, nodeId: string, version: string): string {
  const seg = encodeURIComponent
  return `${ARCHIVE_PREFIX}/${seg(publisherId)}/${seg(nodeId)}/${seg(version)}/node.zip`
}
