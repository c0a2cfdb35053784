/**
 * Requests without a usable Host header (HTTP/1.0 without one, as HAProxy's default health check sends; `Host: a b`)
 * reach the server from Bun with a URL of their path alone. Hono's router reads the path after the scheme's `://`, so
 * `/health` was routed as `h` (a 404) and `/nodes/admin/audit` as `/admin/audit`; and `new URL(c.req.url)` throws. Such
 * a request is given this server's own origin before anything reads it.
 */
import type { Server } from 'bun'

type Fetch = (req: Request, server: Server<unknown>) => Response | Promise<Response>

/** `fetch` seeing only absolute URLs; the client's address is still the connection's. */
export function withAbsoluteUrls(fetch: Fetch, origin: () => string): Fetch {
  return (req, server) => {
    if (!req.url.startsWith('/')) return fetch(req, server)
    const absolute = new Request(origin() + req.url, req)
    const env = { requestIP: () => server.requestIP(req) } as unknown as Server<unknown>
    return fetch(absolute, env)
  }
}
