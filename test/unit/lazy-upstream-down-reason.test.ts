/** The breaker's reason for a host down goes to the log: never the archive URL, which may carry a signature. */
import { expect, test } from 'bun:test'
import { createLazyUpstream } from '../../src/services/mirror/lazy-upstream'
import { createLog } from '../../src/log'

const lazy = () => createLazyUpstream({ http: { timeoutMs: 5_000, attempts: 6 }, log: createLog({ write: () => {} }) })
const read = (body: ReadableStream<Uint8Array>) => new Response(body).text()

test('the reason a host is remembered down never carries the archive URL (it may carry a signature)', async () => {
  // Answers that are not HTTP: the runtime's error names the whole URL.
  const garbage = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: { open: (s) => void s.end('NOT HTTP AT ALL\r\n\r\n'), data() {} },
  })
  try {
    const l = lazy()
    const url = `http://127.0.0.1:${garbage.port}/archives/x.zip?signature=secret`
    await l.http.download(url, read).catch(() => {})
    const [down] = l.breaker.down()
    expect(down?.host).toBe(`http://127.0.0.1:${garbage.port}`)
    expect(down!.reason).not.toContain('secret')
    expect(down!.reason).not.toContain('/archives/')
  } finally {
    garbage.stop(true)
  }
})
