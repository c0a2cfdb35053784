/**
 * The only place errors become responses: AppError as itself (with its headers), Hono's own errors by status, a
 * client gone away at info, anything else a logged 500. `describeError` decides what an error means once; the API
 * renders that here as the registry's `{error, message}`, or, on routes whose spec says so (the video proxy and
 * its image staging), as the proxy's `{message, details}`; the web pages render it as an HTML page
 * (src/web/error-page.tsx).
 */
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { AppError, type ErrorCode } from '../errors'
import type { Log } from '../log'
import { isDatabaseUnavailable } from '../store/db'

/** Which error body a route answers with; a route spec sets it on the request (route-spec.ts). */
export type ErrorBody = 'registry' | 'proxy'

const CODES: Partial<Record<number, ErrorCode>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
}

function errorBody(c: Context, err: AppError) {
  if (c.get('errorBody') === 'proxy') return { message: err.message, details: [...err.details] }
  return { error: err.code, message: err.message }
}

export function renderAppError(c: Context, err: AppError): Response {
  return c.json(errorBody(c, err), err.status as ContentfulStatusCode, err.headers)
}

/** Any error as an AppError that may be shown to the caller; faults are logged here and never show their message. */
export function describeError(log: Log, err: Error, c: Context): AppError {
  if (c.req.raw.signal.aborted) {
    // The client went away mid-request (most often mid-upload): nothing failed here, and nobody reads the answer.
    log.info('request.aborted', { method: c.req.method, path: c.req.path })
    return new AppError(499, 'client_closed_request', 'the client closed the request')
  }
  if (err instanceof AppError) return err
  if (isDatabaseUnavailable(err)) {
    // Not a fault of this request: the database went away (restart, failover, network); it may be back soon.
    log.warn('database.unavailable', { method: c.req.method, path: c.req.path, error: err.message })
    return new AppError(503, 'database_unavailable', 'the database is unavailable; try again shortly', { 'Retry-After': '5' })
  }
  if (err instanceof HTTPException) {
    const status = err.status as AppError['status']
    return new AppError(status, CODES[status] ?? 'bad_request', err.message || 'Request failed')
  }
  log.error('request.failed', { method: c.req.method, path: c.req.path, error: err.message, stack: err.stack })
  return new AppError(500, 'internal', 'Internal Server Error')
}

export const renderError = (log: Log) => (err: Error, c: Context) => renderAppError(c, describeError(log, err, c))
