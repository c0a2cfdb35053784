/**
 * An upstream whose archive URL redirects nowhere useful (in a loop, or to a scheme fetch will not follow) answered:
 * its refusal is final, not tried again (a loop cost a 100-odd requests a try), and its host is not taken for down,
 * so the other archives it serves are still fetched. A real server on 127.0.0.1.
 */
import { afterEach, expect, test } from 'bun:test'
import { createLazyUpstream } from '../../src/services/mirror/lazy-upstream'
import { UpstreamError } from '../../src/upstream/http-client'
import { createLog } from '../../src/log'

let server: ReturnType<typeof Bun.serve> | undefined
afterEach(() => server?.stop(true))

function redirectingUpstream(location: (url: URL) => string) {
  let hits = 0
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      hits++
      const url = new URL(req.url)
      if (url.pathname === '/archives/fine.zip') return new Response('PK fine')
      return new Response(null, { status: 302, headers: { location: location(url) } })
    },
  })
  return { base: `http://127.0.0.1:${server.port}`, hits: () => hits }
}

const lazy = () => createLazyUpstream({ http: { timeoutMs: 5_000, attempts: 6 }, log: createLog({ write: () => {} }) })
const read = (body: ReadableStream<Uint8Array>) => new Response(body).text()

for (const [what, location] of [
  ['a redirect loop', (url: URL) => url.href],
  ['a redirect to file:', () => 'file:///etc/hostname'],
] as const) {
  test(`${what}: refused at once, one try, and the host is not taken for down`, async () => {
    const up = redirectingUpstream(location)
    const l = lazy()
    const failed = await l.http.download(`${up.base}/archives/loop.zip`, read).catch((err) => err)
    expect(failed).toBeInstanceOf(UpstreamError)
    expect(failed.kind).toBe('invalid')
    expect(failed.message).toContain('redirect')
    const hitsOfOneTry = up.hits()
    expect(l.breaker.down()).toEqual([])
    expect(await l.http.download(`${up.base}/archives/fine.zip`, read)).toBe('PK fine')
    expect(up.hits()).toBe(hitsOfOneTry + 1)
  })
}
