/** Per-request state: who is calling. Resolved once by a middleware, read by handlers as c.var.actor. */
import type { Context, MiddlewareHandler } from 'hono'
import { getConnInfo } from 'hono/bun'
import { unauthorized } from '../errors'
import type { Actor } from '../services/access'
import type { Deps } from '../services/deps'
import { userForToken } from '../services/identity'

export type Env = { Variables: { actor: Actor } }

function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown'
  } catch {
    return 'unknown' // app.request() in tests has no socket
  }
}

/** A malformed or unknown bearer token is a 401 on every route; no header means an anonymous caller. */
export function resolveActor(deps: Deps): MiddlewareHandler<Env> {
  return async (c, next) => {
    const header = c.req.header('authorization')
    const address = clientAddress(c)
    if (!header) {
      c.set('actor', { address })
      return next()
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (!m) throw unauthorized('token is not in Bearer format')
    const user = await userForToken(deps.db, m[1]!)
    if (!user) throw unauthorized('invalid auth token')
    c.set('actor', { user, address })
    return next()
  }
}
