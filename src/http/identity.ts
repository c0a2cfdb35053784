/** Who is calling: resolved once per request by the route groups that need it, read by handlers as c.var.actor. */
import type { Context, MiddlewareHandler } from 'hono'
import { getConnInfo } from 'hono/bun'
import type { Actor } from '../services/access'
import { resolveBearer } from '../services/access-tokens'
import type { Deps } from '../services/deps'
import type { ErrorBody } from './errors'

/** `requestId` is set for every request (http/observe.ts); `actor` by the groups that resolve the caller. */
export type Env = { Variables: { actor: Actor; requestId: string; errorBody?: ErrorBody } }

function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown'
  } catch {
    return 'unknown' // app.request() in tests has no socket
  }
}

/**
 * The caller with its address read when first asked for: only reviews, rate limits and audit entries ask, and
 * reading the socket's address cost a download 5% of its CPU.
 */
function actorOf(c: Context, fields: Omit<Actor, 'address'>): Actor {
  let address: string | undefined
  return Object.defineProperty(fields, 'address', { get: () => (address ??= clientAddress(c)), enumerable: true }) as Actor
}

/**
 * Never refuses: a missing, malformed, unknown, revoked or expired bearer token leaves an anonymous caller (public
 * reads answer it as such, CONTRACT 2), with the reason kept so that routes needing a user answer 401 saying why.
 * With `apiKey`, an access token in `X-API-KEY` counts too (the host application sends its key there when it
 * has no bearer token); a bearer header wins when both are sent.
 */
export function identity(deps: Deps, opts: { apiKey?: boolean } = {}): MiddlewareHandler<Env> {
  return async (c, next) => {
    const header = c.req.header('authorization')
    const apiKey = opts.apiKey ? c.req.header('x-api-key')?.trim() : undefined
    if (!header && !apiKey) {
      c.set('actor', actorOf(c, {}))
      return next()
    }
    const token = header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : apiKey
    const resolved = token ? await resolveBearer(deps, token) : { problem: 'token is not in Bearer format' }
    if ('user' in resolved) c.set('actor', actorOf(c, { user: resolved.user }))
    else c.set('actor', actorOf(c, { credentialProblem: resolved.problem }))
    return next()
  }
}
