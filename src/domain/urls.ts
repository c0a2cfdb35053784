/**
 * Where archives live on this server: one path for the signed upload and for downloads, under its own prefix; and an
 * address as logs and messages may show it.
 */

import { mapAddresses } from './addresses'

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

/**
 * The text with every address in it (a whole text may be one) shown without its userinfo, query and fragment, which
 * may hold credentials: a user and token, a presigned URL's signature (X-Amz-Signature, a GCS signature, a token).
 * Scheme, host, port and path stay as given, and so does the punctuation after a query. Upstream addresses go through
 * this wherever they reach a log line, an error message, an answer or a command's output: an upstream's archive URLs
 * are the upstream's to choose. Linear in the text (domain/addresses.ts).
 */
export function withoutUrlSecrets(text: string): string {
  return mapAddresses(text, ({ start, authority, query, trimmed, end }) => {
    const host = text.slice(authority, query)
    const slash = host.indexOf('/')
    const user = host.lastIndexOf('@', slash === -1 ? host.length : slash)
    const kept = text.slice(start, authority) + host.slice(user + 1)
    return query < end ? kept + text.slice(Math.max(trimmed, query + 1), end) : kept
  })
}
