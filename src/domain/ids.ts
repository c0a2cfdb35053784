/** Identifier rules for publishers and nodes, and the random values the server makes. */
import { createHash, randomBytes } from 'node:crypto'

export const PUBLISHER_ID_PATTERN = /^[a-z][a-z0-9-]*$/
export const PUBLISHER_ID_MAX = 64
export const PUBLISHER_ID_MESSAGE = 'Must start with a lowercase letter and can only contain lowercase letters, digits, and hyphens.'

/** The publisher whose nodes may be claimed by their repositories' owners (the upstream's id for legacy nodes). */
export const DEFAULT_UNCLAIMED_PUBLISHER_ID = 'admin-11338bd3-f081-43cf-b3f9-295c829826f7'

export const NODE_ID_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]*[a-zA-Z0-9])?$/
export const NODE_ID_MAX = 100

export const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/
export const USER_ID_MESSAGE = 'user id must be 1-128 characters: letters, digits, ".", "_", "@", "-"'
/** A user's display name and email, as long as anyone's (an email address is at most 320 characters). */
export const USER_NAME_MAX = 200
export const USER_EMAIL_MAX = 320

export function nodeIdProblem(id: string): string | undefined {
  if (id.length < 1 || id.length > NODE_ID_MAX) return 'node id must be between 1 and 100 characters'
  if (!NODE_ID_PATTERN.test(id)) {
    return 'node id can only contain ASCII letters, digits, underscores, hyphens, and periods, and must start and end with a letter or digit'
  }
  return undefined
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i

export const newId = () => crypto.randomUUID()

/** A bearer or publisher token: 256 random bits, URL-safe. */
export const newSecretToken = () => randomBytes(32).toString('base64url')

/** Tokens carry 256 bits of entropy, so a plain SHA-256 is a sufficient one-way store. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')

/** How a stored token is shown after creation: the first 4 characters, then `***`. */
export const maskToken = (prefix: string) => `${prefix.slice(0, 4)}***`

/**
 * An id in the UUID v4 shape derived from a name: the same name always gives the same id, so a fixture loads
 * with the same version ids on every run. (The v4 shape, not v5's, because version ids are checked as v4.)
 */
export function stableUuid(name: string): string {
  const b = createHash('sha256').update(name).digest().subarray(0, 16)
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const hex = b.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
