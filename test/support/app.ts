/**
 * A real app per test: :memory: store (or a schema of its own on PostgreSQL), blobs in a fresh temp dir (or a prefix of
 * their own in the test bucket: support/backends.ts), fixed clock; helpers that call it like clients do.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_ARCHIVE_LIMITS } from '../../src/archive/entries'
import { createUrlSigner } from '../../src/blobs/signing'
import { createApp } from '../../src/http/app'
import { createLog } from '../../src/log'
import { createMetrics } from '../../src/metrics'
import { registerSearchMetrics } from '../../src/search/metrics'
import type { Deps, RegistrySettings } from '../../src/services/deps'
import { createUser } from '../../src/services/identity'
import { createRateLimiter, createSharedRateLimiter } from '../../src/services/rate-limit'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { createStoreSearch } from '../../src/search/store-search'
import { CLAIMS_PER_WINDOW, CLAIM_WINDOW_MS } from '../../src/services/claims'
import { createSharedPolls } from '../../src/services/video-polls'
import { createNodeJsonCache } from '../../src/services/node-json'
import { createDownloadCounter } from '../../src/services/downloads'
import type { Database } from 'bun:sqlite'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { dialectOf, storeOn, type Store } from '../../src/store/db'
import { DEFAULT_UNCLAIMED_PUBLISHER_ID } from '../../src/domain/ids'
import { createRepoHost } from '../../src/upstream/repohost'
import { makeZip, samplePack } from './archives'
import { testBlobStore, testStore } from './backends'
import { staleNodeData } from './documents'

export const PUBLIC_URL = 'http://registry.test'

export interface TestApp {
  app: ReturnType<typeof createApp>
  deps: Deps
  dir: string
  logs: string[]
  clock: { now: Date }
  cleanup(): Promise<void>
  /** JSON request; `token` becomes a bearer header. Returns status, parsed body and headers. */
  call(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>
}

/**
 * `engine: 'store'` answers lists from SQL alone (what the server does while the index warms). `dir` is a data
 * directory to use (and remove on cleanup) instead of a fresh one; `sqlite` a prepared database (say, a
 * deserialized copy of a registry) instead of a new one in memory.
 */
export async function makeTestApp(
  overrides: {
    settings?: Partial<RegistrySettings>
    deps?: Partial<Deps>
    engine?: 'index' | 'store'
    dir?: string
    sqlite?: Database
    /** SQLite and disk, whatever backends the run tests (the permission matrix: its copies are SQLite files). */
    local?: boolean
    /** A store opened by the test (say, through a proxy it cuts); the test closes it. */
    store?: Store
  } = {},
): Promise<TestApp> {
  const dir = overrides.dir ?? mkdtempSync(join(tmpdir(), 'registry-mirror-test-'))
  const local = overrides.local || overrides.sqlite !== undefined
  const given = overrides.store
  const store = given
    ? { db: given, close: async () => {} }
    : overrides.sqlite
      ? await localStore(overrides.sqlite)
      : await testStore({ local })
  const db = store.db
  const limiter = (name: string, limit: number, windowMs: number) =>
    dialectOf(db) === 'postgres' ? createSharedRateLimiter(db, name, limit, windowMs) : createRateLimiter(limit, windowMs)
  const logs: string[] = []
  const log = createLog({ level: 'debug', write: (line) => logs.push(line) })
  const indexed = overrides.engine === 'store' ? undefined : createIndexedSearch(db, log)
  await indexed?.warm()
  const search = indexed ?? createStoreSearch(db)
  const clock = { now: new Date('2026-01-02T03:04:05.678Z') }
  const metrics = createMetrics()
  registerSearchMetrics(metrics.registry, search)
  const deps = {
    db,
    blobs: local ? createDiskBlobStore(dir) : testBlobStore(dir),
    signer: createUrlSigner('test-secret'),
    search,
    nodeJson: createNodeJsonCache(db, overrides.settings?.publicUrl ?? PUBLIC_URL, metrics.cache('node_json'), undefined, indexed),
    log,
    metrics,
    now: () => new Date(clock.now),
    // On PostgreSQL, the limits several instances share, as serve makes them there.
    reviewLimiter: limiter('review', 30, 600_000),
    video: {
      startLimiter: limiter('video-start', 10, 60_000),
      stageLimiter: limiter('video-stage', 20, 60_000),
      polls: createSharedPolls(),
    },
    // Nothing listens on port 9 (discard): a test that needs a repository host starts one and passes its client.
    repoHost: createRepoHost({ apiUrl: 'http://127.0.0.1:9', timeoutMs: 2000 }),
    claimLimiter: limiter('claim', CLAIMS_PER_WINDOW, CLAIM_WINDOW_MS),
    settings: {
      publicUrl: PUBLIC_URL,
      maxUploadBytes: 5 * 1024 * 1024,
      autoApprove: true,
      maxPublishersPerUser: 5,
      requireReviewAuth: false,
      uploadUrlTtlSeconds: 900,
      archiveLimits: DEFAULT_ARCHIVE_LIMITS,
      video: { public: false, maxImageBytes: 10 * 1024 * 1024 },

      readOnly: false,

      metrics: true,

      unclaimedPublisherId: DEFAULT_UNCLAIMED_PUBLISHER_ID,
      ...overrides.settings,
    },
    ...overrides.deps,
  } as Omit<Deps, 'downloads'> as Deps
  // Not started: tests flush the counts when they read them (deps.downloads.flush()).
  deps.downloads ??= createDownloadCounter(deps)
  const app = createApp(deps)
  return {
    app,
    deps,
    dir,
    logs,
    clock,
    async cleanup() {
      // A store the test opened may be closed or cut by now; the others are checked before they close.
      const stale = given ? [] : await staleNodeData(db)
      await store.close()
      rmSync(dir, { recursive: true, force: true })
      if (stale.length) throw new Error(`node documents or search texts out of date at the end of the test: ${stale.join(', ')}`)
    },
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers }
      if (opts.token) headers.authorization = `Bearer ${opts.token}`
      let body: RequestInit['body'] | undefined
      if (opts.body !== undefined) {
        body =
          typeof opts.body === 'string' || opts.body instanceof Uint8Array ? (opts.body as RequestInit['body']) : JSON.stringify(opts.body)
        headers['content-type'] ??= 'application/json'
      }
      const res = await app.request(path, { method, headers, body })
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = text ? JSON.parse(text) : undefined
      } catch {}
      return { status: res.status, body: parsed, headers: res.headers }
    },
  }
}

/** The SHA-256 of every blob the app's store holds, sorted (on disk or in the bucket). */
export async function storedBlobs(t: TestApp): Promise<string[]> {
  const out: string[] = []
  for await (const sha of t.deps.blobs.list()) out.push(sha)
  return out.sort()
}

async function localStore(sqlite: Database) {
  const db = await storeOn(sqlite)
  return { db, close: () => db.destroy() }
}

export async function addUser(t: TestApp, id: string, opts: { admin?: boolean } = {}): Promise<string> {
  return createUser(t.deps, undefined, { id, email: `${id}@example.com`, name: id.toUpperCase(), isAdmin: opts.admin ?? false })
}

export async function addPublisher(t: TestApp, token: string, id: string): Promise<void> {
  const res = await t.call('POST', '/publishers', { token, body: { id, name: `${id} name` } })
  if (res.status !== 201) throw new Error(`publisher ${id}: ${res.status} ${JSON.stringify(res.body)}`)
}

export async function addPublisherToken(t: TestApp, token: string, publisherId: string): Promise<string> {
  const res = await t.call('POST', `/publishers/${publisherId}/tokens`, { token, body: { name: 'ci' } })
  if (res.status !== 201) throw new Error(`token: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.token
}

/** A user "alice" owning publisher "acme" with a publisher token. */
export async function aliceWithPublisher(t: TestApp) {
  const token = await addUser(t, 'alice')
  await addPublisher(t, token, 'acme')
  return { token, pat: await addPublisherToken(t, token, 'acme') }
}

export async function publish(
  t: TestApp,
  opts: {
    pat: string
    publisher?: string
    node: string
    version: string
    nodeFields?: Record<string, unknown>
    versionFields?: Record<string, unknown>
  },
) {
  return t.call('POST', `/publishers/${opts.publisher ?? 'acme'}/nodes/${opts.node}/versions`, {
    body: {
      personal_access_token: opts.pat,
      node: { id: opts.node, description: `${opts.node} description`, ...opts.nodeFields },
      node_version: { version: opts.version, dependencies: [], ...opts.versionFields },
    },
  })
}

export async function upload(t: TestApp, signedUrl: string, bytes: Uint8Array = makeZip(samplePack()), contentType = 'application/zip') {
  // Under a public URL with a path prefix, the reverse proxy in front takes the prefix off.
  const prefix = new URL(t.deps.settings.publicUrl).pathname.replace(/\/+$/, '')
  const url = new URL(signedUrl)
  const res = await t.app.request(url.pathname.slice(prefix.length) + url.search, {
    method: 'PUT',
    headers: { 'content-type': contentType },
    body: bytes,
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

/** Publish and upload a valid archive; returns the version JSON after the upload. */
export async function publishActive(t: TestApp, opts: Parameters<typeof publish>[1] & { bytes?: Uint8Array }) {
  const res = await publish(t, opts)
  if (res.status !== 201) throw new Error(`publish: ${res.status} ${JSON.stringify(res.body)}`)
  const up = await upload(t, res.body.signedUrl, opts.bytes)
  if (up.status !== 200) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body)}`)
  return up.body.node_version
}
