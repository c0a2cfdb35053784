import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { aliceWithPublisher, makeTestApp, publish, type TestApp } from '../support/app'
import { DEFAULT_ARCHIVE_LIMITS } from '../../src/archive/entries'
import { makeZip } from '../support/archives'
import { costliestCases, type HostileCase, KEY_HEAVY_NAMES, keyHeavyPython } from '../support/hostile-archives'

/** Generous: an idle /health answers in about a millisecond. */
const HEALTH_BOUND_MS = 250

let t: TestApp
let server: ReturnType<typeof Bun.serve>
/**
 * With the default limits no single step of a check runs long (Python files are read up to 2 MiB), so even a
 * check on the event loop would interleave with /health. Limits that read Python files up to 48 MiB let one
 * file take a second of extraction: the test then fails unless checks run off the event loop.
 */
const GENEROUS_LIMITS = { ...DEFAULT_ARCHIVE_LIMITS, maxReadBytes: 48 * 1024 * 1024 }
const ONE_LONG_STEP: HostileCase = {
  name: 'a 32 MiB Python file packed with host node keys',
  format: 'zip',
  bytes: () => makeZip([{ name: '__init__.py', data: keyHeavyPython(32 * 1024 * 1024) }]),
  expect: { hostNodes: KEY_HEAVY_NAMES },
}

beforeEach(async () => {
  t = await makeTestApp({ settings: { maxUploadBytes: 64 * 1024 * 1024, archiveLimits: GENEROUS_LIMITS } })
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: t.app.fetch })
})
afterEach(async () => {
  await server.stop(true)
  await t.cleanup()
})

/** PUTs the bytes to the signed URL on the real server (the URL names the public host; the signature covers only the path). */
async function uploadOverHttp(signedUrl: string, bytes: Uint8Array) {
  const { pathname, search } = new URL(signedUrl)
  const res = await fetch(new URL(pathname + search, server.url), {
    method: 'PUT',
    headers: { 'content-type': 'application/zip' },
    body: bytes,
  })
  return { status: res.status, body: (await res.json()) as { node_version: { status: string; status_reason: string } } }
}

/** Polls GET /health every 10 ms until `until` settles; returns every answer's latency. */
async function pollHealth(until: Promise<unknown>): Promise<number[]> {
  let settled = false
  until.finally(() => (settled = true))
  const latencies: number[] = []
  while (!settled) {
    const started = performance.now()
    const res = await fetch(new URL('/health', server.url))
    await res.arrayBuffer()
    expect(res.status).toBe(200)
    latencies.push(performance.now() - started)
    await Bun.sleep(10)
  }
  return latencies
}

describe('hostile uploads do not slow other requests', () => {
  test('GET /health answers promptly while the slowest hostile archives are inspected, and each version gets its verdict', async () => {
    const { pat } = await aliceWithPublisher(t)
    const cases = [ONE_LONG_STEP, ...costliestCases()]
    // Built before the clock starts: making a gzip of 64 MiB of zeros is itself slow.
    const payloads = cases.map((c) => c.bytes())
    // The server shares this process: collect the garbage of building them now, not while /health is timed.
    Bun.gc(true)
    const signedUrls: string[] = []
    for (const [i] of cases.entries()) signedUrls.push((await publish(t, { pat, node: `pack-${i}`, version: '1.0.0' })).body.signedUrl)

    const uploads = Promise.all(cases.map((_, i) => uploadOverHttp(signedUrls[i]!, payloads[i]!)))
    const latencies = await pollHealth(uploads)
    const results = await uploads

    expect(latencies.length).toBeGreaterThan(5)
    const slowest = [...latencies].sort((a, b) => b - a).slice(0, 5)
    expect({ slowest, withinBound: slowest[0]! < HEALTH_BOUND_MS }).toMatchObject({ withinBound: true })
    results.forEach((res, i) => expectVerdict(cases[i]!, res))
  }, 60_000)
})

function expectVerdict(c: HostileCase, res: Awaited<ReturnType<typeof uploadOverHttp>>) {
  expect(res.status).toBe(200)
  const { status, status_reason } = res.body.node_version
  if ('reason' in c.expect) {
    expect({ case: c.name, status }).toEqual({ case: c.name, status: 'NodeVersionStatusFlagged' })
    expect(status_reason).toContain(c.expect.reason)
  } else {
    expect({ case: c.name, status }).toEqual({ case: c.name, status: 'NodeVersionStatusActive' })
  }
}
