/** Who is calling: resolved once per request by the route groups that need it, read by handlers as c.var.actor. */
import type { Context, MiddlewareHandler } from 'hono'
import { getConnInfo } from 'hono/bun'
import type { Actor } from '../services/access'
import type { Deps } from '../services/deps'
import { userForToken } from '../services/identity'
import type { ErrorBody } from './errors'

export type Env = { Variables: { actor: Actor; errorBody?: ErrorBody } }

function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown'
  } catch {
    return 'unknown' // app.request() in tests has no socket
  }
}

/**
 * Never refuses: a missing, malformed or unknown bearer token leaves an anonymous caller (public reads answer
 * it as such, CONTRACT 2), with the reason kept so that routes needing a user answer 401 saying why.
 * With `apiKey`, an access token in `X-API-KEY` counts too (the host application sends its key there when it
 * has no bearer token); a bearer header wins when both are sent.
 */
export function identity(deps: Deps, opts: { apiKey?: boolean } = {}): MiddlewareHandler<Env> {
  return async (c, next) => {
    const address = clientAddress(c)
    const header = c.req.header('authorization')
    const apiKey = opts.apiKey ? c.req.header('x-api-key')?.trim() : undefined
    if (!header && !apiKey) {
      c.set('actor', { address })
      return next()
    }
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : undefined
    const token = header ? m?.[1] : apiKey
    const user = token ? await userForToken(deps.db, token) : undefined
    if (user) c.set('actor', { user, address })
    else c.set('actor', { address, credentialProblem: token ? 'invalid auth token' : 'token is not in Bearer format' })
    return next()
  }
}
