/**
 * Where archives live on this server: one path for the signed upload and for downloads, under its own prefix; and an
 * address as logs and messages may show it.
 */

export const ARCHIVE_PREFIX = '/archives'

export function archivePath(publisherId: string, nodeId: string, version: string): string {
  const seg = encodeURIComponent
  return `${ARCHIVE_PREFIX}/${seg(publisherId)}/${seg(nodeId)}/${seg(version)}/node.zip`
}

/**
 * An address with its password masked, for logs and messages. One that does not parse as a URL (a typo in a setting)
 * is shown as given but for what lies between a user's `:` and the last `@`.
 */
export function withoutPassword(address: string): string {
  if (!URL.canParse(address)) return address.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):.*@/is, '$1:***@')
  const url = new URL(address)
  if (!url.password) return address
  url.password = '***'
  return url.toString()
}
