/** Two registries on 127.0.0.1 for mirroring tests: apps served over real HTTP, and a sync run with fast retries. */
import type { Server } from 'bun'
import type { RegistrySettings } from '../../src/services/deps'
import { commitWrite } from '../../src/services/changes'
import { createLazyUpstream } from '../../src/services/mirror/lazy-upstream'
import { createMirrorRuntime } from '../../src/services/mirror/runtime'
import { insertRows } from '../../src/store/bulk'
import { runSync, type SyncOptions, type SyncSummary } from '../../src/services/mirror/sync'
import { createUpstreamHttp, type UpstreamHttpOptions } from '../../src/upstream/http-client'
import { makeTestApp, type TestApp } from './app'

export interface ServedApp extends TestApp {
  url: string
  /** Paths of the requests it received, in order. */
  requests: string[]
  /** Called on each request before the app answers; a response returned answers instead (a fault). */
  intercept?: (url: URL, req: Request) => Response | undefined
  server: Server<undefined>
  stop(): Promise<void>
}

/** A test app listening on 127.0.0.1, its public URL its real address (downloadUrls then work over HTTP). */
export async function serveTestApp(settings: Partial<RegistrySettings> = {}): Promise<ServedApp> {
  let handler: (req: Request, srv: Server<undefined>) => Response | Promise<Response> = () => new Response('starting', { status: 503 })
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req, srv) => handler(req, srv) })
  const url = `http://127.0.0.1:${server.port}`
  const t = await makeTestApp({ settings: { publicUrl: url, ...settings } })
  const requests: string[] = []
  handler = (req, srv) => {
    const at = new URL(req.url)
    requests.push(at.pathname)
    return served.intercept?.(at, req) ?? t.app.fetch(req, srv)
  }
  const served: ServedApp = {
    ...t,
    url,
    requests,
    server,
    async stop() {
      server.stop(true)
      await t.cleanup()
    },
  }
  return served
}

/**
 * Adds `nodes` nodes of one publisher with `versionsEach` versions each (host node names on the latest) straight
 * into the store, in one write that enters them in the change feed: a feed of several pages, quickly.
 */
export async function seedNodes(t: TestApp, nodes: number, versionsEach: number): Promise<void> {
  const now = t.clock.now.toISOString()
  await commitWrite(t.deps, async (w) => {
    await insertRows(w.db, 'publishers', [{ id: 'bulk', name: 'Bulk', created_at: now, updated_at: now }])
    w.publisher('bulk')
    const nodeRows = []
    const versionRows = []
    const names = []
    for (let n = 0; n < nodes; n++) {
      const id = `bulk-pack-${n}`
      const versions = Array.from({ length: versionsEach }, (_, k) => ({ id: crypto.randomUUID(), version: `1.${k}.0` }))
      const latest = versions[versions.length - 1]!
      nodeRows.push({
        id,
        normalized_id: id,
        publisher_id: 'bulk',
        name: `Bulk pack ${n}`,
        latest_version_id: latest.id,
        latest_version_status: 'active',
        created_at: now,
        updated_at: now,
      })
      for (const v of versions) versionRows.push({ ...v, node_id: id, status: 'active', created_at: now, updated_at: now })
      names.push({ version_id: latest.id, name: `BulkNode${n}` })
      w.node(id)
      for (const v of versions) w.version(v.id, id)
    }
    await insertRows(w.db, 'nodes', nodeRows)
    await insertRows(w.db, 'node_versions', versionRows)
    await insertRows(w.db, 'host_nodes', names)
  })
}

/** Waits between retries are recorded, not slept: tests stay fast and can still check what was asked for. */
export function fastHttp(overrides: Partial<UpstreamHttpOptions> = {}) {
  const waits: number[] = []
  const http = createUpstreamHttp({
    timeoutMs: 2000,
    backoffMs: 1,
    sleep: async (ms) => {
      waits.push(ms)
    },
    ...overrides,
  })
  return { http, waits }
}

export async function sync(t: TestApp, from: string, opts: Partial<Omit<SyncOptions, 'from'>> = {}): Promise<SyncSummary> {
  return runSync(t.deps, { from, archives: 'none', full: false, fullEvery: 1000, http: fastHttp().http, ...opts })
}

/** The client of archives fetched on first download, as `serve` makes it, with test timings (`openMs`: how long a host found down is not asked). */
export function lazyUpstream(t: TestApp, overrides: Partial<UpstreamHttpOptions> & { openMs?: number } = {}) {
  const { openMs, ...http } = overrides
  return createLazyUpstream({
    http: { timeoutMs: 2000, attempts: 6, backoffMs: 1, sleep: async () => {}, ...http },
    openMs,
    log: t.deps.log,
  })
}

/** Lets the app fetch mirrored archives on first download, as `serve` does. */
export function enableLazy(t: TestApp, overrides: Partial<UpstreamHttpOptions> & { openMs?: number } = {}) {
  const lazy = lazyUpstream(t, overrides)
  t.deps.mirror = createMirrorRuntime(lazy)
  return lazy
}
