/** `serve`: wires store, blobs, signer, search and app, loads a fixture, listens, and shuts down cleanly on a signal. */
import { mkdtempSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_ARCHIVE_LIMITS } from './archive/entries'
import { releaseAbandonedUploads } from './store/uploads'
import { createUrlSigner } from './blobs/signing'
import type { Io } from './io'
import type { Config } from './config'
import { withAbsoluteUrls } from './http/absolute-url'
import { createApp, type App } from './http/app'
import { bufferedWriter, createLog, type Log } from './log'
import { createMetrics, monitorEventLoop } from './metrics'
import { registerSearchMetrics } from './search/metrics'
import { sweepStagedImages } from './services/staged-images'
import { dropExpiredIntents } from './services/blob-intent'
import { createVideoProvider, type VideoProvider } from './upstream/video-provider'
import type { Deps } from './services/deps'
import { createIndexedSearch } from './search/indexed-search'
import { createThreadedStoreSearch } from './search/store-search-thread'
import { createStoreSearch } from './search/store-search'
import { CLAIMS_PER_WINDOW, CLAIM_WINDOW_MS } from './services/claims'
import { createSharedPolls } from './services/video-polls'
import { createNodeJsonCache } from './services/node-json'
import { createDownloadCounter } from './services/downloads'
import { loadFixture } from './services/fixture'
import { createRepoHost } from './upstream/repohost'
import { dropRateWindows } from './store/shared-state'
import { followStore } from './services/store-follower'
import { DATABASE_WAIT_MS, openBackends, type Backends } from './serve-backends'
import { checkpointInBackground } from './store/checkpointer'
import { startDownloadWriter } from './store/download-writer'
import { startMirroring } from './serve-mirror'
import { IDLE_TIMEOUT_S } from './http/idle-timeout'
import { fillDocumentsInBackground } from './services/document-fill'
import { createStartingApp } from './http/starting'

const SHUTDOWN_GRACE_MS = 10_000

/** The video provider when both its URL and key are set (the settings check refuses one without the other). */
function videoProvider(config: Config, log: Log): VideoProvider | undefined {
  const baseUrl = config['video-provider-url']
  const key = config['video-provider-key']
  if (!baseUrl || !key) return undefined
  return createVideoProvider({ baseUrl, key, timeoutMs: config['video-provider-timeout'] * 1000, log })
}

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host)

/** Upload leftovers of a process killed mid-upload: swept this often, once this old (past every URL's expiry). */
const SWEEP_EVERY_MS = 10 * 60_000
const ABANDONED_AFTER_MS = 60 * 60_000
/** Rate limit windows are at most this long; older rows only take room. */
const RATE_WINDOWS_KEPT_MS = 24 * 60 * 60_000
/** How often an instance looks at the change feed without a wake-up (a cheap indexed read). */
const FOLLOW_EVERY_MS = 500

/** Reads and loads the fixture file; returns its problems, one line each, or undefined when it loaded. */
async function loadFixtureFile(deps: Deps, file: string): Promise<string[] | undefined> {
  const started = performance.now()
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? ''
    const why = { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'it is a directory' }[code] ?? (err as Error).message
    return [`${file}: cannot read the fixture: ${why}`]
  }
  const loaded = await loadFixture(deps, text, file)
  if (!loaded.ok) return loaded.problems.map((p) => `${file}: ${p}`)
  deps.log.info('fixture.loaded', { file, ...loaded.summary, ms: Math.round(performance.now() - started) })
  return undefined
}

export interface ServeOptions {
  /** Use a fresh data directory under the system's temporary directory, removed at exit (a fixture without --data). */
  temporaryData?: boolean
}

export async function serve(config: Config, io: Io, opts: ServeOptions = {}): Promise<number> {
  const log = createLog({ level: config['log-level'], write: bufferedWriter() })
  const dataDir = opts.temporaryData ? mkdtempSync(join(tmpdir(), 'registry-mirror-fixture-')) : config.data
  const removeTemporary = () => opts.temporaryData && rmSync(dataDir, { recursive: true, force: true })
  let backends: Backends
  try {
    backends = await openBackends(config, dataDir, log, { durable: !opts.temporaryData, databaseWaitMs: DATABASE_WAIT_MS })
  } catch (err) {
    removeTemporary()
    io.err((err as Error).message)
    return 1
  }
  const { db, blobs } = backends
  let app: App | undefined
  const startingApp = createStartingApp(log, config['cors-origin'])
  let server: ReturnType<typeof Bun.serve>
  try {
    server = Bun.serve({
      hostname: config.host,
      port: config.port,
      idleTimeout: IDLE_TIMEOUT_S,
      maxRequestBodySize: Number.MAX_SAFE_INTEGER, // uploads are capped while streaming, with a 413 of our own
      fetch: withAbsoluteUrls(
        (req, srv) => (app ? app.fetch(req, srv) : startingApp.fetch(req)),
        () => `http://${urlHost(config.host)}:${server.port}`,
      ),
    })
  } catch (err) {
    await db.destroy()
    removeTemporary()
    io.err(`cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`)
    return 1
  }
  const publicUrl = config['public-url'] ?? `http://${urlHost(config.host)}:${server.port}`
  // While it warms, the store answers from a thread of its own (a SQLite file's second handle): its scans do not
  // hold up other requests. PostgreSQL answers on its own connections.
  const storeSearch = createStoreSearch(db)
  const fallback = backends.sqlitePath ? createThreadedStoreSearch(backends.sqlitePath, storeSearch, log) : storeSearch
  const search = createIndexedSearch(db, log, { fallback })
  const metrics = createMetrics()
  registerSearchMetrics(metrics.registry, search)
  const deps = {
    db,
    blobs,
    signer: createUrlSigner(backends.signingSecret),
    search,
    nodeJson: createNodeJsonCache(db, publicUrl, metrics.cache('node_json'), config['node-cache-bytes'], search),
    log,
    metrics,
    now: () => new Date(),
    reviewLimiter: backends.limiter('review', 30, 10 * 60_000),
    video: {
      provider: videoProvider(config, log),
      startLimiter: backends.limiter('video-start', config['video-start-limit'], 60_000),
      // The host application stages two images (start and end frame) for each task.
      stageLimiter: backends.limiter('video-stage', 2 * config['video-start-limit'], 60_000),
      polls: createSharedPolls(),
    },
    repoHost: createRepoHost({ apiUrl: config['repohost-api-url'], timeoutMs: config['repohost-timeout-ms'] }),
    claimLimiter: backends.limiter('claim', CLAIMS_PER_WINDOW, CLAIM_WINDOW_MS),
    settings: {
      publicUrl,
      maxUploadBytes: config['max-upload-bytes'],
      autoApprove: config['auto-approve'],
      maxPublishersPerUser: config['max-publishers-per-user'],
      requireReviewAuth: config['require-review-auth'],
      uploadUrlTtlSeconds: 15 * 60,
      archiveLimits: { ...DEFAULT_ARCHIVE_LIMITS, timeBudgetMs: config['archive-time-budget'] * 1000 },
      video: { public: config['video-public'], maxImageBytes: config['video-max-image-bytes'] },
      readOnly: config['read-only'],
      presignedDownloads: config['presigned-downloads'],
      metrics: config.metrics,

      unclaimedPublisherId: config['unclaimed-publisher-id'],
    },
  } as Omit<Deps, 'downloads'> as Deps
  // The counts are written by a thread of their own on a SQLite file (see store/download-writer.ts); a read-only
  // registry counts nothing.
  const downloadWriter = startDownloadWriter(db, config['read-only'] ? undefined : backends.sqlitePath)
  deps.downloads = createDownloadCounter(deps, downloadWriter)
  // Before "listening" is printed, so that a client that waits for that line finds the fixture's data.
  const problems = config.fixture === undefined ? undefined : await loadFixtureFile(deps, config.fixture)
  if (problems) {
    for (const line of problems) io.err(line)
    await server.stop(true)
    search.close()
    await downloadWriter.stop()
    await db.destroy()
    removeTemporary()
    return 2
  }
  // Writes of other instances (and of commands beside this server: sync, import) reach this index and these caches:
  // at once on PostgreSQL (LISTEN), else within a poll.
  const follower = await followStore(deps, FOLLOW_EVERY_MS)
  deps.feed = follower
  const mirroring = await startMirroring(deps, config)
  app = createApp(deps, { corsOrigin: config['cors-origin'], gzip: config.gzip })
  const stopEventLoopMonitor = monitorEventLoop(metrics)
  io.out(`listening on http://${urlHost(config.host)}:${server.port}`)
  log.info('server.started', {
    host: config.host,
    port: server.port,
    publicUrl,
    data: dataDir,
    ...backends.where,
    readOnly: config['read-only'],
    videoProvider: config['video-provider-url'] ? new URL(config['video-provider-url']).host : null,
  })
  deps.downloads.start()
  // Each second's download flush is copied into the store file by another thread (see store/checkpointer.ts).
  const checkpointer = await checkpointInBackground(db, backends.sqlitePath)
  // The store answers searches until the index is warm; a failed warm-up leaves it that way.
  const warm = search.warm().catch((err: Error) => log.error('search.warm_failed', { error: err.message, stack: err.stack }))
  // Then the documents of nodes written before they existed (an upgraded store), a batch at a time; a read-only
  // registry changes nothing, and serves such nodes from their rows.
  const filling = warm.then(() => (config['read-only'] ? undefined : fillDocumentsInBackground(db, log)))

  const sweep = async () => {
    const parts = await blobs.sweep(ABANDONED_AFTER_MS)
    const claims = await releaseAbandonedUploads(db, new Date(Date.now() - ABANDONED_AFTER_MS).toISOString())
    const images = await sweepStagedImages(deps)
    await dropRateWindows(db, new Date(Date.now() - RATE_WINDOWS_KEPT_MS).toISOString())
    const intents = await dropExpiredIntents(deps)
    if (parts || claims || images || intents) log.info('uploads.swept', { parts, claims, images, intents })
  }
  const sweeper = setInterval(() => sweep().catch((err: Error) => log.warn('uploads.sweep_failed', { error: err.message })), SWEEP_EVERY_MS)
  await sweep()

  const signal = await io.stopSignal
  log.info('server.stopping', { signal })
  clearInterval(sweeper)
  follower.stop()
  stopEventLoopMonitor()
  // At once, beside the requests in flight: a sync under way stops between batches (a retry's wait cut short).
  const mirroringStopped = mirroring.stop()
  const graceful = server.stop(false)
  const forced = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), SHUTDOWN_GRACE_MS).unref())
  if ((await Promise.race([graceful, forced])) === 'timeout') await server.stop(true)
  await mirroringStopped // before the store closes
  await deps.downloads.stop() // the counts of the last interval, after the last request
  await downloadWriter.stop()
  search.close()
  await (await filling)?.stop()
  await checkpointer?.stop()
  await db.destroy()
  removeTemporary()
  log.info('server.stopped', {})
  return 0
}
