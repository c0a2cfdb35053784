/** Which 502/504 answers the upstream client takes as final: another registry-mirror's saying its own upstream failed. */
import { expect, test } from 'bun:test'
import { createUpstreamHttp, UpstreamError } from '../../src/upstream/http-client'

/** A client whose every request gets `answer`, counting them. */
function answering(answer: () => Response) {
  let calls = 0
  const http = createUpstreamHttp({
    attempts: 4,
    backoffMs: 1,
    sleep: async () => {},
    resolve: async () => [], // the test's host names are asked of no resolver
    fetch: (async () => (calls++, answer())) as unknown as typeof fetch,
  })
  return { http, calls: () => calls }
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

async function failure(http: ReturnType<typeof answering>['http']): Promise<UpstreamError> {
  const err = await http.download('http://up.test/archives/a/b/1.0.0/node.zip', async () => 'bytes').catch((e) => e)
  expect(err).toBeInstanceOf(UpstreamError)
  return err
}

test.each(['upstream_failed', 'upstream_timeout', 'archive_refused'])(
  'a 502 %s from a registry-mirror is final, its message said',
  async (code) => {
    const c = answering(() => json(502, { error: code, message: 'the upstream has been unreachable since 2026-01-01T00:00:00.000Z' }))
    const err = await failure(c.http)
    expect(c.calls()).toBe(1)
    expect(err.kind).toBe('status')
    expect(err.status).toBe(502)
    expect(err.message).toBe(
      `HTTP 502 from http://up.test/archives/a/b/1.0.0/node.zip: ${code}: the upstream has been unreachable since 2026-01-01T00:00:00.000Z`,
    )
  },
)

test('a 504 upstream_timeout is final too; a long message is cut', async () => {
  const c = answering(() => json(504, { error: 'upstream_timeout', message: 'x'.repeat(5000) }))
  const err = await failure(c.http)
  expect(c.calls()).toBe(1)
  expect(err.message.length).toBeLessThan(400)
})

test.each([
  ['a gateway page', () => new Response('<html>Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } })],
  ['another error code', () => json(502, { error: 'internal', message: 'x' })],
  ['JSON that is not an error body', () => json(502, ['upstream_failed'])],
  ['a 503 storage_unavailable', () => json(503, { error: 'storage_unavailable', message: 'try again shortly' })],
])('%s is retried as before', async (_name, answer) => {
  const c = answering(answer)
  const err = await failure(c.http)
  expect(c.calls()).toBe(4)
  expect(err.kind).toBe('unreachable')
})
