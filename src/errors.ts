/** The one error type of the registry, its closed set of codes, and its factories. Services throw these; http/errors.ts renders them. */

export type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 405 | 409 | 413 | 415 | 416 | 429 | 499 | 500 | 502 | 503 | 504

/** Every `error` code a response can carry; /openapi lists them, and clients may match on them. */
export const ERROR_CODES = [
  'bad_request',
  'invalid_json',
  'invalid_version',
  'invalid_node_id',
  'invalid_publisher_id',
  'invalid_personal_access_token',
  'unauthorized',
  'forbidden',
  'permission_denied',
  'user_banned',
  'publisher_banned',
  'node_banned',
  'version_banned',
  'version_flagged',
  'not_admin',
  'node_claimed',
  'invalid_repository',
  'invalid_repohost_token',
  'not_repository_admin',
  'invalid_signature',
  'signature_expired',
  'publisher_limit',
  'not_found',
  'method_not_allowed',
  'conflict',
  'publisher_exists',
  'reserved_publisher_id',
  'node_exists',
  'node_deleted',
  'publisher_not_empty',
  'version_exists',
  'user_exists',
  'archive_exists',
  'upload_in_progress',
  'payload_too_large',
  'unsupported_media_type',
  'range_not_satisfiable',
  'rate_limited',
  'payment_required',
  'client_closed_request',
  'internal',
  'archive_missing',
  'archive_refused',
  'mirrored_read_only',
  'upstream_failed',
  'not_configured',
  'upstream_timeout',
  'read_only',
  'database_unavailable',
  'storage_unavailable',
  'starting',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

export class AppError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly code: ErrorCode,
    message: string,
    /** Headers the response must carry (Retry-After, Content-Range, WWW-Authenticate, ...). */
    readonly headers: Record<string, string> = {},
    /** One line per problem, when there are several (invalid fields); the proxy error body lists them. */
    readonly details: readonly string[] = [],
  ) {
    super(clipped(message))
    this.details = details.map(clipped)
  }
}

/**
 * Messages name what the caller sent (an unknown id, a bad value, the path to a field), and a URL or a field may be
 * 64 KiB: an answer keeps at most this much of each line, its beginning and its end (what went wrong is said last:
 * `node "…" not found`, `body.a.0.0…0: text may not hold a NUL`), so a 404 is never a copy of the request.
 */
export const MAX_MESSAGE_CHARS = 1000

const isHighSurrogate = (s: string, i: number) => /[\uD800-\uDBFF]/.test(s[i] ?? '')
const isLowSurrogate = (s: string, i: number) => /[\uDC00-\uDFFF]/.test(s[i] ?? '')

function clipped(line: string): string {
  if (line.length <= MAX_MESSAGE_CHARS) return line
  const half = MAX_MESSAGE_CHARS / 2
  const headEnd = isHighSurrogate(line, half - 1) ? half - 1 : half
  const tailStart = isLowSurrogate(line, line.length - half) ? line.length - half + 1 : line.length - half
  return `${line.slice(0, headEnd)}…${line.slice(tailStart)}`
}

export const badRequest = (message: string, code: ErrorCode = 'bad_request') => new AppError(400, code, message)
export const unauthorized = (message = 'Authentication required: send Authorization: Bearer <token>') =>
  new AppError(401, 'unauthorized', message, { 'WWW-Authenticate': 'Bearer' })
export const forbidden = (message: string, code: ErrorCode = 'forbidden') => new AppError(403, code, message)
export const notFound = (message: string) => new AppError(404, 'not_found', message)
export const conflict = (message: string, code: ErrorCode = 'conflict') => new AppError(409, code, message)
export const payloadTooLarge = (message: string) => new AppError(413, 'payload_too_large', message)
export const unsupportedMediaType = (message: string) => new AppError(415, 'unsupported_media_type', message)
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new AppError(429, 'rate_limited', message, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) })
/** `retryAfterSeconds`: when asking again may find the upstream back (said in Retry-After). */
const retryAfterHeader = (s?: number): Record<string, string> =>
  s === undefined ? {} : { 'Retry-After': String(Math.max(1, Math.ceil(s))) }
export const badGateway = (message: string, details: readonly string[] = [], retryAfterSeconds?: number) =>
  new AppError(502, 'upstream_failed', message, retryAfterHeader(retryAfterSeconds), details)
export const storageUnavailable = () =>
  new AppError(503, 'storage_unavailable', 'the archive storage is unavailable; try again shortly', { 'Retry-After': '5' })
/** A request that came before the server serves: it listens once its store is open, and serves a moment later. */
export const starting = () => new AppError(503, 'starting', 'the server is starting; try again shortly', { 'Retry-After': '1' })
export const notConfigured = (message: string) => new AppError(503, 'not_configured', message)
export const gatewayTimeout = (message: string, retryAfterSeconds?: number) =>
  new AppError(504, 'upstream_timeout', message, retryAfterHeader(retryAfterSeconds))

// Messages the real clients show to people keep the upstream wording.
export const nodeBanned = () => forbidden('Node Banned', 'node_banned')
export const permissionDenied = () => forbidden('Permission denied', 'permission_denied')
export const invalidPublisherToken = () => badRequest('Invalid personal access token', 'invalid_personal_access_token')
export const userBanned = () => forbidden('user/publisher is banned', 'user_banned')
export const publisherBanned = () => forbidden('user/publisher is banned', 'publisher_banned')
export const notAdmin = () => forbidden('User is not admin', 'not_admin')
export const readOnly = () => forbidden('This registry is read-only: it serves reads and installs, and refuses every write', 'read_only')
export const nodeClaimed = () => forbidden('node is already claimed', 'node_claimed')
