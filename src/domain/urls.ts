/**
 * Where archives live on this server: one path for the signed upload and for downloads, under its own prefix; and an
 * address as logs and messages may show it.
 */

export const ARCHIVE_PREFIX = '/archives'

export function archivePath(publisherId: string, nodeId: string, version: string): string {
  const seg = encodeURIComponent
  return `${ARCHIVE_PREFIX}/${seg(publisherId)}/${seg(nodeId)}/${seg(version)}/node.zip`
}

/** An address with its password masked, for logs and messages; anything that does not parse as a URL, unchanged. */
export function withoutPassword(address: string): string {
  if (!URL.canParse(address)) return address
  const url = new URL(address)
  if (!url.password) return address
  url.password = '***'
  return url.toString()
}
