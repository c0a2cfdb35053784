/**
 * Each route's contract in one object: who may call it, what it reads (query, JSON body) and what it answers.
 * The object is the route's first middleware; handlers read their validated input through it, and /openapi is
 * generated from the same objects (http/openapi.ts), so the document cannot drift from what is served.
 */
import type { Context, MiddlewareHandler } from 'hono'
import * as v from 'valibot'
import { requireAdmin, requireUser, type Actor } from '../services/access'
import type { ErrorBody } from './errors'
import type { Env } from './identity'
import { jsonBody, queryParams } from './validate'

type Schema = v.GenericSchema<unknown, unknown>

/**
 * public: anyone; optional: a bearer token changes the answer; bearer: a user; admin: an admin; signed: the URL's
 * signature; video: a user by bearer token or X-API-KEY, or anyone when the operator opened the video proxy.
 */
export type Auth = 'public' | 'optional' | 'bearer' | 'admin' | 'signed' | 'video'

export interface RouteSpec<Q extends Schema | undefined = Schema | undefined, B extends Schema | undefined = Schema | undefined> {
  summary: string
  tag: string
  auth: Auth
  query?: Q
  body?: B
  /** Bodies that are not JSON (archive and image uploads). */
  bodyType?: string
  /** The success body: a schema of the JSON, a media type for bytes, or nothing. */
  response?: Schema | { mediaType: string }
  status?: number
  description?: string
  /** The error body this route answers with (default: the registry's `{error, message}`). */
  errorBody?: ErrorBody

  /** Changes nothing although its method is not GET (a lookup whose query is a JSON body): a read-only registry serves it. */
  safe?: boolean
}

export const SPEC = Symbol('route-spec')

/**
 * The caller a route needs, checked before its handler reads anything: a missing or bad token is 401 (and a
 * non-admin 403) before a malformed or oversized body is looked at, so an anonymous caller cannot make the server
 * parse a body it would refuse anyway. Handlers still check what depends on the target (roles, bans).
 */
const CALLER_CHECKS: Partial<Record<Auth, (actor: Actor) => unknown>> = { bearer: requireUser, admin: requireAdmin }

export type SpecifiedRoute<Q extends Schema | undefined, B extends Schema | undefined> = MiddlewareHandler & {
  [SPEC]: RouteSpec<Q, B>
  /** The validated query string (400 naming the parameter otherwise). */
  query(c: Context): Q extends Schema ? v.InferOutput<Q> : never
  /** The validated JSON body (400 for malformed JSON or a bad field, 415 for another media type). */
  body(c: Context): Promise<B extends Schema ? v.InferOutput<B> : never>
}

export function route<Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined>(
  spec: RouteSpec<Q, B>,
): SpecifiedRoute<Q, B> {
  const errorBody = spec.errorBody
  const guard = CALLER_CHECKS[spec.auth]
  const middleware: MiddlewareHandler<Env> =
    errorBody || guard
      ? async (c, next) => {
          if (errorBody) c.set('errorBody', errorBody)
          guard?.(c.var.actor)
          await next()
        }
      : async (_c, next) => next()
  return Object.assign(middleware, {
    [SPEC]: spec,
    query: (c: Context) => queryParams(c, spec.query ?? v.object({})),
    body: (c: Context) => jsonBody(c, spec.body ?? v.object({})),
  }) as SpecifiedRoute<Q, B>
}

export const isSpecified = (handler: unknown): handler is { [SPEC]: RouteSpec } =>
  typeof handler === 'function' && SPEC in (handler as object)
