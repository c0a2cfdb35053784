/** Two registries on 127.0.0.1 for mirroring tests: apps served over real HTTP, and a sync run with fast retries. */
import type { Server } from 'bun'
import type { RegistrySettings } from '../../src/services/deps'
import { createMirrorRuntime } from '../../src/services/mirror/runtime'
import { runSync, type SyncOptions, type SyncSummary } from '../../src/services/mirror/sync'
import { createUpstreamHttp, type UpstreamHttpOptions } from '../../src/upstream/http-client'
import { makeTestApp, type TestApp } from './app'

export interface ServedApp extends TestApp {
  url: string
  /** Paths of the requests it received, in order. */
  requests: string[]
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
    requests.push(new URL(req.url).pathname)
    return t.app.fetch(req, srv)
  }
  return {
    ...t,
    url,
    requests,
    server,
    async stop() {
      server.stop(true)
      await t.cleanup()
    },
  }
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

/** Lets the app fetch mirrored archives on first download, as `serve` does. */
export function enableLazy(t: TestApp, overrides: Partial<UpstreamHttpOptions> = {}) {
  t.deps.mirror = createMirrorRuntime(fastHttp(overrides).http)
}
