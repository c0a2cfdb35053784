/**
 * Archives of mirrored versions: fetched from the upstream (all at sync time, or one on its first download),
 * streamed to the blob store, checked like an upload, and pinned by SHA-256. Bytes that differ from the pin are
 * refused and reported, never served; the pinned bytes stay. Concurrent first downloads share one fetch.
 */
import { inspectArchive } from '../../archive/inspect'
import type { StagedBlob } from '../../blobs/blob-store'
import { AppError, badGateway, gatewayTimeout, storageUnavailable } from '../../errors'
import { findMirrorArchive, putMirrorArchives, setArchiveProblem } from '../../store/mirror-entities'
import type { MirrorArchiveRow } from '../../store/schema'
import { insertHostNodes } from '../../store/versions'
import { hostOf, type CircuitBreaker } from '../../upstream/circuit-breaker'
import { ConsumerStalled } from '../../upstream/consumed-within'
import { UpstreamDown, UpstreamError, type UpstreamHttp } from '../../upstream/http-client'
import { underBlobIntent, type HeldIntent } from '../blob-intent'
import { commitWrite } from '../changes'
import type { Deps } from '../deps'
import type { ArchiveFlight, MirrorRuntime } from './runtime'

export type ArchiveOutcome = { stored: true; bytes: number } | { stored: false; refused: string } | { stored: false; unchanged: true }

interface Target {
  version_id: string
  node_id: string
  url: string
  sha256: string | null
}

/** The rows a fetch needs, for one version. */
export async function archiveTarget(deps: Pick<Deps, 'db'>, versionId: string): Promise<Target | undefined> {
  return deps.db
    .selectFrom('mirror_archives')
    .innerJoin('node_versions', 'node_versions.id', 'mirror_archives.version_id')
    .select(['mirror_archives.version_id', 'node_versions.node_id', 'mirror_archives.url', 'mirror_archives.sha256'])
    .where('mirror_archives.version_id', '=', versionId)
    .executeTakeFirst()
}

/**
 * Records why, in a write that feeds the version's node: an archive only mirrored is no longer served, which its node
 * shows (the downloadUrl of its latest version, its install answer) in every process's caches as in a fresh one.
 */
async function refuse(deps: Deps, t: Target, reason: string): Promise<ArchiveOutcome> {
  await commitWrite(deps, async (w) => {
    await setArchiveProblem(w.db, t.version_id, reason, w.now)
    w.version(t.version_id, t.node_id)
  })
  deps.log.warn('mirror.archive_refused', { version: t.version_id, node: t.node_id, reason })
  return { stored: false, refused: reason }
}

/** Records stored bytes as the version's archive (in one write with its pin), and host node names read from them. */
async function bindArchive(
  deps: Deps,
  t: Target,
  blob: { sha256: string; size: number; format: 'zip' | 'tar.gz'; etag: string | null; hostNodes?: string[] },
  intent: HeldIntent,
) {
  await intent.write(async (w) => {
    const row = { version_id: t.version_id, sha256: blob.sha256, size_bytes: blob.size, format: blob.format, created_at: w.now }
    await w.db
      .insertInto('archives')
      .values(row)
      .onConflict((oc) => oc.column('version_id').doNothing())
      .execute()
    // Names read from the archive itself, when the upstream gave none.
    const known = await w.db.selectFrom('host_nodes').select('name').where('version_id', '=', t.version_id).executeTakeFirst()
    if (!known && blob.hostNodes) await insertHostNodes(w.db, t.version_id, blob.hostNodes)
    const current = (await findMirrorArchive(w.db, t.version_id))!
    const pinned: MirrorArchiveRow = {
      ...current,
      sha256: blob.sha256,
      size_bytes: blob.size,
      etag: blob.etag,
      problem: '',
      problem_at: null,
    }
    await putMirrorArchives(w.db, [pinned])
    w.version(t.version_id, t.node_id)
  })
}

/**
 * The upstream's bytes staged in the blob store, or why they were not: an archive over the upload limit is refused
 * like an invalid one (reported, tried again by a full pass), not a failure that ends the run.
 */
async function stageArchive(deps: Deps, body: ReadableStream<Uint8Array>): Promise<StagedBlob | { tooLarge: string }> {
  try {
    return await deps.blobs.stage(body, deps.settings.maxUploadBytes)
  } catch (err) {
    if (err instanceof AppError && err.status === 413) return { tooLarge: err.message }
    throw err
  }
}

/**
 * Fetches, checks and stores one archive; a pin it does not match refuses the bytes. `signal` abandons the transfer
 * (a lazy fetch nobody waits on any more, giving up its place); `onBody` is told when the archive's body begins to
 * come (true) and when it has all come (false): stopping the fetch frees its place only in between.
 */
export async function fetchArchive(
  deps: Deps,
  http: UpstreamHttp,
  t: Target,
  signal?: AbortSignal,
  onBody?: (coming: boolean) => void,
): Promise<ArchiveOutcome> {
  // Bytes announced by their SHA-256 and already stored here (another version's, an import's) need no transfer.
  if (t.sha256 && (await deps.blobs.has(t.sha256))) {
    // Looked for again under an intent: a sweep could otherwise delete the bytes found before the row is written.
    const sha256 = t.sha256
    const bound = await underBlobIntent(deps, [sha256], async (intent) => {
      // In the store itself: a local copy (object storage's cache) may be all that is left of swept bytes.
      const have = (await deps.blobs.has(sha256)) ? await deps.blobs.open(sha256) : undefined
      if (!have) return false // swept meanwhile: fetched below
      const head = new Uint8Array(await have.slice(0, 2).arrayBuffer())
      const format = head[0] === 0x1f && head[1] === 0x8b ? 'tar.gz' : 'zip'
      await bindArchive(deps, t, { sha256, size: have.size, format, etag: null }, intent)
      return true
    })
    if (bound) return { stored: true, bytes: 0 }
  }
  const fetched = await http.download(
    t.url,
    async (body, res) => {
      onBody?.(true)
      try {
        return { staged: await stageArchive(deps, body), etag: res.headers.get('etag') }
      } finally {
        onBody?.(false) // checked and stored from here on, holding no place
      }
    },
    // All come: stopping the fetch while the store writes it out (its fsync) would free no place any sooner.
    { signal, onBodyEnd: () => onBody?.(false) },
  )
  if ('notModified' in fetched) throw new UpstreamError('invalid', `${t.url}: unexpected 304`)
  if ('tooLarge' in fetched.staged) return refuse(deps, t, fetched.staged.tooLarge)
  const { staged, etag } = fetched as { staged: StagedBlob; etag: string | null }
  try {
    if (t.sha256 && staged.sha256 !== t.sha256) {
      return await refuse(deps, t, `the upstream serves other bytes (SHA-256 ${staged.sha256}) than the ones pinned (${t.sha256}): refused`)
    }
    const inspection = await inspectArchive(staged.localPath, deps.settings.archiveLimits)
    if (!inspection.ok) return await refuse(deps, t, `invalid archive: ${inspection.reason}`)
    // From before the commit to the row, as an upload's.
    await underBlobIntent(deps, [staged.sha256], async (intent) => {
      await staged.commit() // durable under its hash before any row points at it
      const bytes = { sha256: staged.sha256, size: staged.size, format: inspection.format, etag, hostNodes: inspection.hostNodes }
      await bindArchive(deps, t, bytes, intent)
    })
    return { stored: true, bytes: staged.size }
  } finally {
    await staged.discard() // a no-op after commit
  }
}

/**
 * Checks a stored archive against its upstream (a full pass does this): unchanged bytes cost a 304 or a hash;
 * other bytes are refused and reported, and the pinned ones stay served. The pinned bytes served again clear an
 * earlier refusal.
 */
export async function verifyArchive(
  deps: Deps,
  http: UpstreamHttp,
  t: Target & { etag: string | null; problem: string },
): Promise<ArchiveOutcome> {
  const fetched = await http.download(
    t.url,
    async (body, res) => ({ staged: await stageArchive(deps, body), etag: res.headers.get('etag') }),
    { headers: t.etag ? { 'if-none-match': t.etag } : {} },
  )
  let etag = t.etag
  if (!('notModified' in fetched)) {
    if ('tooLarge' in fetched.staged) return refuse(deps, t, `the upstream now serves other bytes: ${fetched.staged.tooLarge}`)
    const { staged, etag: sent } = fetched as { staged: StagedBlob; etag: string | null }
    await staged.discard()
    if (staged.sha256 !== t.sha256) {
      return refuse(deps, t, `the upstream now serves other bytes (SHA-256 ${staged.sha256}) than the ones pinned (${t.sha256}): refused`)
    }
    etag = sent
  }
  if (etag !== t.etag || t.problem) {
    await deps.db
      .updateTable('mirror_archives')
      .set({ etag, problem: '', problem_at: null })
      .where('version_id', '=', t.version_id)
      .execute()
  }
  return { stored: false, unchanged: true }
}

/** How long after a refusal a download asks the upstream for the archive again (it may have been put right). */
export const REFUSED_ASKED_AGAIN_MS = 60 * 60 * 1000

/**
 * Ends the oldest archive fetch nobody waits for any more, for a download someone does wait on (starting a fetch, or
 * joining one that waits for a place): a slow but steady transfer goes on after its download gave up (a later one
 * finds it stored), but it holds one of the client's places until its body ends, and four of them (an upstream
 * sending just within the pace) kept every other first download waiting for hours. The one ended is fetched again
 * by its next download: it leaves the table as it is stopped, since a download joining it while its transfer winds
 * down would only inherit its end ("stopped", a 502).
 */
function giveUpAbandonedFetch(deps: Deps, mirror: MirrorRuntime): void {
  for (const [versionId, flight] of mirror.inflight) {
    // One still waiting for a place holds none: ending it would free nothing, and fail its next download.
    if (flight.waiting > 0 || !flight.transferring) continue
    mirror.inflight.delete(versionId)
    flight.stop.abort()
    deps.log.info('mirror.archive_fetch_given_up', { version: versionId, why: 'its place was needed by a download waited on' })
    return
  }
}

/** `waitS`: when a download asks the upstream again; none for the refusal a fetch just made (an hour then). */
const archiveRefused = (reason: string, waitS = REFUSED_ASKED_AGAIN_MS / 1000) =>
  new AppError(502, 'archive_refused', `the upstream's archive was refused: ${reason}; it is asked for again in ${waitS} s`, {
    'Retry-After': String(waitS),
  })

/** A mirrored archive not stored yet, fetched on its first download (one fetch for concurrent downloads). */
export async function fetchOnFirstDownload(deps: Deps, versionId: string): Promise<boolean> {
  const mirror = deps.mirror
  if (!mirror) return false
  const target = await archiveTarget(deps, versionId)
  if (!target) return false
  const source = await deps.db
    .selectFrom('mirror_archives')
    .innerJoin('mirror_sources', 'mirror_sources.id', 'mirror_archives.source_id')
    .select(['mirror_sources.archives', 'mirror_archives.problem', 'mirror_archives.problem_at'])
    .where('mirror_archives.version_id', '=', versionId)
    .executeTakeFirstOrThrow()
  if (source.archives === 'none') return false
  // Refused before (bytes other than the pinned ones, an archive the check refused): said again, as its first
  // download said it (a bare "no archive" told the person nothing), until the upstream is asked again: the archive
  // pass of a sync leaves refused archives it does not fetch to downloads, so without this a lazy mirror never would.
  if (source.problem) {
    const retryAt = (source.problem_at ? Date.parse(source.problem_at) : 0) + REFUSED_ASKED_AGAIN_MS
    const waitS = Math.ceil((retryAt - deps.now().getTime()) / 1000)
    if (waitS > 0) throw archiveRefused(source.problem, waitS)
  }
  let flight = mirror.inflight.get(versionId)
  // This download will wait for one of the client's places: a new fetch that finds them all taken, or a fetch joined
  // while requests wait for one (its own, perhaps: a breaker's probe behind an endless transfer nobody waits on).
  const needsPlace = flight ? mirror.http.waiting() : mirror.http.full()
  if (!flight) {
    const stop = new AbortController()
    const fresh: ArchiveFlight = { done: Promise.resolve(), waiting: 0, stop, transferring: false }
    const onBody = (coming: boolean) => (fresh.transferring = coming)
    // Unless it was given up (out of the table then), and a fresh fetch of the archive has taken its entry since.
    const ended = () => mirror.inflight.get(versionId) === fresh && mirror.inflight.delete(versionId)
    fresh.done = fetchArchive(deps, mirror.http, target, stop.signal, onBody).finally(ended)
    fresh.done.catch(() => {}) // downloads that stopped waiting leave it to end alone
    flight = fresh
    mirror.inflight.set(versionId, flight)
  }
  flight.waiting++ // before a place is taken from a fetch nobody waits on: never this one
  if (needsPlace) giveUpAbandonedFetch(deps, mirror)
  try {
    const outcome = (await withinTime(flight.done, mirror.waitMs).finally(() => flight.waiting--)) as ArchiveOutcome | 'late'
    if (outcome === 'late') {
      deps.log.info('mirror.archive_fetch_slow', { version: versionId, waited_ms: mirror.waitMs })
      const s = Math.ceil(mirror.waitMs / 1000)
      throw gatewayTimeout(
        `this archive is not stored here yet, and the upstream has not sent all of it within ${s} s; it is still being fetched`,
        s,
      )
    }
    if ('refused' in outcome) throw archiveRefused(outcome.refused)
    return true
  } catch (err) {
    if (err instanceof UpstreamError) throw upstreamFailure(deps, mirror.breaker, target.url, versionId, err)
    if (err instanceof ConsumerStalled) {
      // The bytes came, and the archive storage did not take them (a hung disk): ours to fix, not the upstream's.
      deps.log.error('mirror.archive_fetch_failed', { version: versionId, error: `the archive storage stalled: ${err.message}` })
      throw storageUnavailable()
    }
    throw err
  }
}

/** The promise's value, or 'late' once `ms` have passed. */
async function withinTime<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)))
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

/** While a probe of a host is under way, the Retry-After of the downloads it turns away. */
const PROBING_RETRY_AFTER_S = 5

/**
 * The answer to a download whose archive the upstream did not provide: while its host is remembered as down,
 * since when and when it is asked again (the download that found it down says so too); 504 when it did not answer
 * in time, else 502. The breaker's clock is the real one (a test's clock may stand still).
 */
function upstreamFailure(deps: Deps, breaker: CircuitBreaker, url: string, versionId: string, err: UpstreamError): AppError {
  // The host whose failure it was: the archive URL's, or a redirect's target (a storage host).
  const host = err.host ?? hostOf(url)
  const down = err instanceof UpstreamDown ? err.down : breaker.down().find((d) => d.host === host)
  if (!(err instanceof UpstreamDown)) deps.log.warn('mirror.archive_fetch_failed', { version: versionId, error: err.message })
  const notHere = 'this archive is not stored here yet'
  if (!down || err.kind !== 'unreachable') {
    if (err.timedOut) return gatewayTimeout(`${notHere}, and the upstream did not provide it in time`)
    return badGateway(`${notHere}, and the upstream could not provide it`)
  }
  const retryS = down.retryAt ? Math.max(1, Math.ceil((down.retryAt.getTime() - Date.now()) / 1000)) : PROBING_RETRY_AFTER_S
  const since = down.since.toISOString()
  const state = down.timedOut ? `has been timing out since ${since}` : `has been unreachable since ${since}`
  const message = `${notHere}, and the upstream ${state}; it is asked again in ${retryS} s`
  return down.timedOut ? gatewayTimeout(message, retryS) : badGateway(message, [], retryS)
}
