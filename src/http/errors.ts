/** The only place errors become responses: AppError as itself, Hono's own errors by status, anything else a logged 500. */
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { AppError } from '../errors'
import type { Log } from '../log'

const CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
}

export function errorBody(code: string, message: string) {
  return { error: code, message }
}

export const renderError = (log: Log) => (err: Error, c: Context) => {
  if (err instanceof AppError) {
    return c.json(errorBody(err.code, err.message), err.status as ContentfulStatusCode)
  }
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode
    return c.json(errorBody(CODES[status] ?? 'error', err.message || 'Request failed'), status)
  }
  log.error('request.failed', { method: c.req.method, path: c.req.path, error: err.message, stack: err.stack })
  return c.json(errorBody('internal', 'Internal Server Error'), 500)
}
