/** Request body limits that fail with our 413, for route groups and routes whose bodies are read whole. */
import type { MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { payloadTooLarge } from '../errors'

export const JSON_BODY_LIMIT = 1024 * 1024

export const limitBody = (maxSize: number): MiddlewareHandler =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw payloadTooLarge(`request bodies are limited to ${maxSize} bytes`)
    },
  })
