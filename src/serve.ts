/** `serve`: wires store, blobs, signer, search and app, listens, and shuts down cleanly on a signal. */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { DEFAULT_ARCHIVE_LIMITS } from './archive/entries'
import { createDiskBlobStore } from './blobs/disk'
import { releaseAbandonedUploads } from './store/uploads'
import { createUrlSigner } from './blobs/signing'
import type { Io } from './io'
import type { Config } from './config'
import { createApp, type App } from './http/app'
import { createLog } from './log'
import type { Deps } from './services/deps'
import { createRateLimiter } from './services/rate-limit'
import { createIndexedSearch } from './search/indexed-search'
import { createNodeJsonCache } from './services/node-json'
import { openStore, type Store } from './store/db'
import { prepareDataDir } from './data-dir'
import { startMirroring } from './serve-mirror'

const SHUTDOWN_GRACE_MS = 10_000

/** The signing secret: generated on first start and kept in the data directory (mode 0600). */
function signingSecret(dir: string): string {
  const path = join(dir, 'signing.key')
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    const secret = randomBytes(32).toString('hex')
    try {
      writeFileSync(path, secret + '\n', { mode: 0o600, flag: 'wx' })
      return secret
    } catch {
      return readFileSync(path, 'utf8').trim() // another process made it first
    }
  }
}

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host)

/** Upload leftovers of a process killed mid-upload: swept this often, once this old (past every URL's expiry). */
const SWEEP_EVERY_MS = 10 * 60_000
const ABANDONED_AFTER_MS = 60 * 60_000

export async function serve(config: Config, io: Io): Promise<number> {
  const log = createLog({ level: config['log-level'] })
  let db: Store
  try {
    db = await openStore(join(prepareDataDir(config.data), 'registry.db'))
  } catch (err) {
    io.err(`cannot open the store in ${config.data}: ${(err as Error).message}`)
    return 1
  }
  let app: App | undefined
  let server: ReturnType<typeof Bun.serve>
  try {
    server = Bun.serve({
      hostname: config.host,
      port: config.port,
      idleTimeout: 120,
      maxRequestBodySize: Number.MAX_SAFE_INTEGER, // uploads are capped while streaming, with a 413 of our own
      fetch: (req, srv) => (app ? app.fetch(req, srv) : new Response('starting', { status: 503 })),
    })
  } catch (err) {
    await db.destroy()
    io.err(`cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`)
    return 1
  }
  const publicUrl = config['public-url'] ?? `http://${urlHost(config.host)}:${server.port}`
  const search = createIndexedSearch(db, log)
  const blobs = createDiskBlobStore(config.data)
  const deps: Deps = {
    db,
    blobs,
    signer: createUrlSigner(signingSecret(config.data)),
    search,
    nodeJson: createNodeJsonCache(db, publicUrl),
    log,
    now: () => new Date(),
    reviewLimiter: createRateLimiter(30, 10 * 60_000),
    settings: {
      publicUrl,
      maxUploadBytes: config['max-upload-bytes'],
      autoApprove: config['auto-approve'],
      maxPublishersPerUser: config['max-publishers-per-user'],
      requireReviewAuth: config['require-review-auth'],
      uploadUrlTtlSeconds: 15 * 60,
      archiveLimits: DEFAULT_ARCHIVE_LIMITS,
    },
  }
  const mirroring = await startMirroring(deps, config)
  app = createApp(deps, { corsOrigin: config['cors-origin'], gzip: config.gzip })
  io.out(`listening on http://${urlHost(config.host)}:${server.port}`)
  log.info('server.started', { host: config.host, port: server.port, publicUrl, data: config.data })
  // The store answers searches until the index is warm; a failed warm-up leaves it that way.
  search.warm().catch((err: Error) => log.error('search.warm_failed', { error: err.message, stack: err.stack }))

  const sweep = async () => {
    const parts = await blobs.sweep(ABANDONED_AFTER_MS)
    const claims = await releaseAbandonedUploads(db, new Date(Date.now() - ABANDONED_AFTER_MS).toISOString())
    if (parts || claims) log.info('uploads.swept', { parts, claims })
  }
  const sweeper = setInterval(() => sweep().catch((err: Error) => log.warn('uploads.sweep_failed', { error: err.message })), SWEEP_EVERY_MS)
  await sweep()

  const signal = await io.stopSignal
  clearInterval(sweeper)
  await mirroring.stop() // a sync under way stops between batches, before the store closes
  log.info('server.stopping', { signal })
  const graceful = server.stop(false)
  const forced = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), SHUTDOWN_GRACE_MS).unref())
  if ((await Promise.race([graceful, forced])) === 'timeout') await server.stop(true)
  search.close()
  await db.destroy()
  log.info('server.stopped', {})
  return 0
}
