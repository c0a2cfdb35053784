/** The one error type of the registry, and its factories. Services throw these; http/errors.ts renders them. */

export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 416 | 429 | 500 | 502 | 503 | 504

export class AppError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

export const badRequest = (message: string, code = 'bad_request') => new AppError(400, code, message)
export const unauthorized = (message = 'Authentication required: send Authorization: Bearer <token>') =>
  new AppError(401, 'unauthorized', message)
export const forbidden = (message: string, code = 'forbidden') => new AppError(403, code, message)
export const notFound = (message: string) => new AppError(404, 'not_found', message)
export const conflict = (message: string, code = 'conflict') => new AppError(409, code, message)
export const payloadTooLarge = (message: string) => new AppError(413, 'payload_too_large', message)
export const unsupportedMediaType = (message: string) => new AppError(415, 'unsupported_media_type', message)
export const tooManyRequests = (message: string) => new AppError(429, 'rate_limited', message)

// Messages the real clients show to people keep the upstream wording.
export const nodeBanned = () => forbidden('Node Banned', 'node_banned')
export const permissionDenied = () => forbidden('Permission denied', 'permission_denied')
export const invalidPublisherToken = () => badRequest('Invalid personal access token', 'invalid_personal_access_token')
