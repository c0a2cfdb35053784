/**
 * HEAD answers the length GET would. Hono answers HEAD by running the GET route and dropping its body, and Bun then
 * sends `Content-Length: 0` for the empty body; so a body whose length the answer does not state is measured here
 * first (the GET route ran anyway). Answers that state their length (archives) are left as they are, unread.
 */
import type { MiddlewareHandler } from 'hono'

export const headLength: MiddlewareHandler = async (c, next) => {
  await next()
  if (c.req.method !== 'HEAD' || !c.res.body || c.res.headers.has('content-length')) return
  const bytes = await c.res.arrayBuffer()
  const measured = new Response(bytes, c.res) // its own headers: a proxied answer's may be immutable
  measured.headers.set('content-length', String(bytes.byteLength))
  c.res = measured
}
