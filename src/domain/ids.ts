/** Identifier rules for publishers and nodes, and the random values the server makes. */
import { createHash, randomBytes } from 'node:crypto'

export const PUBLISHER_ID_PATTERN = /^[a-z][a-z0-9-]*$/
export const PUBLISHER_ID_MAX = 64
export const PUBLISHER_ID_MESSAGE = 'Must start with a lowercase letter and can only contain lowercase letters, digits, and hyphens.'

const NODE_ID_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]*[a-zA-Z0-9])?$/
const NODE_ID_MAX = 100

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
