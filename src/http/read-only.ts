/**
 * `--read-only`: one guard in front of every route, so that routes added later are covered without knowing
 * about it. A request whose method can change something (anything but GET, HEAD, OPTIONS) is refused with
 * 403 read_only before the caller or the body is read, unless its route declares itself `safe`.
 */
import type { MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import { readOnly } from '../errors'
import type { RegistrySettings } from '../services/deps'
import { isSpecified, SPEC } from './route-spec'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Reads the setting on every request (tests turn it on after building their data through the API). */
export function readOnlyGuard(settings: Pick<RegistrySettings, 'readOnly'>): MiddlewareHandler {
  return async (c, next) => {
    if (!settings.readOnly || SAFE_METHODS.has(c.req.method)) return next()
    if (matchedRoutes(c).some((r) => isSpecified(r.handler) && r.handler[SPEC].safe)) return next()
    throw readOnly()
  }
}
