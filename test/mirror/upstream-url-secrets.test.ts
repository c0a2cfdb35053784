/**
 * Upstream addresses may carry credentials: a presigned URL's signature in its query (an upstream on object storage,
 * the public registry's signed downloads), a token as its user. None of it reaches a log line, an error answer, a
 * sync's output or /ready: addresses are shown without userinfo, query and fragment. Real servers on 127.0.0.1: an
 * upstream registry, and a storage host it redirects archives to with presigned URLs.
 */
import { afterEach, expect, test } from 'bun:test'
import { SYNC_SETTINGS, loadConfig } from '../../src/config'
import { createMirrorRuntime } from '../../src/services/mirror/runtime'
import { createUpstreamHttp } from '../../src/upstream/http-client'
import { makeZip, samplePack } from '../support/archives'
import { runCommand } from '../support/cli'
import { timed } from '../support/gone-upstream'
import { lazyUpstream, sync } from '../support/mirror'
import { tempDirs } from '../support/tmp'
import { archiveOf, SECRET, upstreamWithStorageHost, type StorageHostWorld } from '../support/storage-host'

let world: StorageHostWorld | undefined
const dirs = tempDirs('url-secrets')
afterEach(async () => {
  await world?.stop()
  world = undefined
  dirs.cleanup()
})

const TOKEN = 'dG9rZW4tb2YtdGhlLXVzZXI'
const zip = makeZip(samplePack([{ name: 'model.bin', data: new Uint8Array(5_000).fill(9) }]))
const expired = () => new Response('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>', { status: 403 })

/** Every line and text given holds no credential of the test's. */
function noSecrets(texts: string[]) {
  for (const text of texts) {
    expect(text).not.toContain(SECRET)
    expect(text).not.toContain(TOKEN)
    expect(text).not.toContain('X-Amz')
  }
}

test('an archive URL announced with a token and a signature: its failure is logged and answered without them', async () => {
  world = await upstreamWithStorageHost({ pack: zip }, [])
  const { mirror, upstream } = world
  // As a registry whose downloadUrls are signed would announce them.
  const signed = (url: string) => `${url.replace('http://', `http://mirror:${TOKEN}@`)}?token=${TOKEN}&X-Amz-Signature=${SECRET}`
  const row = await mirror.deps.db.selectFrom('mirror_archives').select(['version_id', 'url']).executeTakeFirstOrThrow()
  await mirror.deps.db
    .updateTable('mirror_archives')
    .set({ url: signed(row.url) })
    .where('version_id', '=', row.version_id)
    .execute()
  upstream.intercept = (url) => (url.pathname === archiveOf('pack') ? expired() : undefined)

  const failed = await timed(mirror, archiveOf('pack'))
  expect(failed.res.status).toBe(502)
  const logged = mirror.logs.map((l) => JSON.parse(l)).find((l) => l.event === 'mirror.archive_fetch_failed')
  expect(logged.error).toBe(`HTTP 403 from ${row.url}`)
  noSecrets([JSON.stringify(failed.body), ...mirror.logs])
})

test('redirected to a presigned URL that fails: the sync run, its retries, its recorded error and its output say so without it', async () => {
  world = await upstreamWithStorageHost({ pack: zip }, ['pack'])
  const { mirror, upstream, storage } = world
  let asked = 0
  storage.intercept = () => (asked++ === 0 ? new Response('busy', { status: 503 }) : expired())
  const retries: unknown[] = []
  const http = createUpstreamHttp({ timeoutMs: 2_000, attempts: 3, backoffMs: 1, sleep: async () => {}, onRetry: (r) => retries.push(r) })

  const summary = await sync(mirror, upstream.url, { archives: 'eager', http })
  expect(summary.complete).toBe(false)
  expect(summary.reason).toBe(`1 archive could not be fetched (the first, pack@1.0.0: HTTP 403 from ${storage.origin}/bucket/pack.zip)`)
  expect(retries).toEqual([{ url: `${upstream.url}${archiveOf('pack')}`, attempt: 1, waitMs: expect.any(Number), reason: 'HTTP 503' }])
  const source = await mirror.deps.db.selectFrom('mirror_sources').select('last_error').executeTakeFirstOrThrow()
  expect(source.last_error).toBe(summary.reason!)
  noSecrets([summary.reason!, source.last_error, JSON.stringify(summary), ...mirror.logs])

  // The command's own output, from a data directory of its own.
  storage.intercept = () => expired()
  const run = await runCommand(['sync', '--from', upstream.url, '--archives', '--data', dirs.make()])
  expect(run.code).toBe(1)
  expect(run.out.join('\n')).toContain(`HTTP 403 from ${storage.origin}/bucket/pack.zip`)
  noSecrets([...run.out, ...run.err])
})

test("/ready shows a followed upstream's address and last error without their secrets", async () => {
  world = await upstreamWithStorageHost({ pack: zip }, [])
  const { mirror } = world
  const presigned = `https://bucket.test/pack.zip?X-Amz-Signature=${SECRET}`
  mirror.deps.mirror = createMirrorRuntime(lazyUpstream(mirror), () => ({
    state: 'stale',
    upstream: `https://registry.test/?token=${TOKEN}`,
    lastSuccessAt: null,
    lastAttemptAt: null,
    lastError: `1 archive could not be fetched (the first, pack 1.0.0: HTTP 403 from ${presigned})`,
  }))
  const ready = await mirror.call('GET', '/ready')
  expect(ready.body.mirror).toMatchObject({
    upstream: 'https://registry.test/',
    last_error: '1 archive could not be fetched (the first, pack 1.0.0: HTTP 403 from https://bucket.test/pack.zip)',
  })
})

test('an upstream address with a token as its user is refused without showing it; one with a query is refused', () => {
  const problems = (from: string) => loadConfig({ flags: { from }, env: {} }, SYNC_SETTINGS).problems
  const withUser = problems(`https://${TOKEN}@registry.test`)
  expect(withUser).toHaveLength(1)
  expect(withUser[0]).toEndWith('(got "https://registry.test")')
  const withQuery = problems(`https://registry.test/?token=${TOKEN}`)
  expect(withQuery).toHaveLength(1)
  noSecrets(withQuery)
})
