/**
 * Air-gap bundles (tar, via tar-stream). Export writes a consistent snapshot (one read transaction) of the
 * change feed, or the changes after a serial, with the archives stored here. Import checks every member's
 * SHA-256, every row and every archive (as a sync checks one) before anything becomes visible, refuses a gap in
 * a series of incremental bundles, then applies the rows in order through the same code as a feed sync (so it is
 * idempotent and resumable).
 */
import { once } from 'node:events'
import { inspectArchive } from '../../archive/inspect'
import { pipeline } from 'node:stream/promises'
import tar from 'tar-stream'
import * as v from 'valibot'
import type { StagedBlob } from '../../blobs/blob-store'
import {
  archiveName,
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  BundleManifestSchema,
  MANIFEST_NAME,
  rowsName,
  type BundleManifest,
} from '../../domain/bundle'
import { FEED_MAX_LIMIT, type FeedEnvelope } from '../../domain/feed'
import { archivedAmong } from '../../store/blob-references'
import { feedPosition } from '../../store/changes'
import { ensureSource, findSource, updateSource } from '../../store/mirror-sources'
import { feedPageItems, type FeedPageItems } from '../../upstream/feed-client'
import { readAhead } from '../../upstream/feed-reader'
import { underBlobIntent, type HeldIntent } from '../blob-intent'
import { timestamp, type Deps } from '../deps'
import { readFeed } from '../feed'
import { asBundleError, BundleError, ImportStopped, members, type Member } from './bundle-reader'
import { parseRows, RowsSeen } from './bundle-rows'
import { AHEAD, followPages } from './feed-pass'
import type { RunContext, SyncProgress, SyncSummary } from './sync'

export { BundleError, ImportStopped } from './bundle-reader'

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
const MAX_MEMBER_TEXT = 256 * 1024 * 1024

function addEntry(pack: tar.Pack, name: string, data: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => pack.entry({ name, size: data.byteLength }, data, (err) => (err ? reject(err) : resolve())))
}

async function addStreamEntry(pack: tar.Pack, name: string, size: number, body: ReadableStream<Uint8Array>): Promise<void> {
  let settle!: (err?: Error | null) => void
  const written = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())))
  written.catch(() => {}) // awaited below; a pack already failed throws here first
  const sink = pack.entry({ name, size }, settle)
  for await (const chunk of body) if (!sink.write(chunk)) await once(sink, 'drain')
  sink.end(undefined)
  await written
}

/**
 * A version whose archive a `sync --archives` would fetch: one the upstream lets download, and active (sync fetches
 * only those; a flagged or pending one is not downloadable here anyway), so the advice to run it is not in vain.
 */
function wouldBeFetched(entity: unknown): boolean {
  const version = entity as { downloadUrl?: string; status?: string } | undefined
  return !!version?.downloadUrl && version.status === 'NodeVersionStatusActive'
}

export interface ExportResult {
  manifest: BundleManifest
  /** Active versions with an archive here whose bytes are not stored (fetched on first download, not yet): not in the bundle. */
  missingArchives: number
}

/** Writes the bundle to `sink`: a snapshot of everything (since 0), or the changes after `since`. */
export async function exportBundle(deps: Deps, since: number, sink: NodeJS.WritableStream): Promise<ExportResult> {
  const pack = tar.pack()
  const written = pipeline(pack, sink)
  written.catch(() => {})
  try {
    // One read transaction: the rows and the archive list are one consistent state, whatever the server writes meanwhile
    // (read-only: it takes no write lock, which would hold the server's writes as long as the export runs).
    const result = await deps.db
      .transaction()
      .setAccessMode('read only')
      .execute(async (trx) => {
        const { instanceId, lastSerial } = await feedPosition(trx)
        if (since > lastSerial) throw new BundleError(`--since ${since} is past this registry's newest serial (${lastSerial})`)
        const rows: BundleManifest['rows'] = []
        const wanted = new Map<string, number>()
        let missing = 0
        for (let cursor = since, chunk = 0; cursor < lastSerial; chunk++) {
          const page = await readFeed({ db: trx, settings: { ...deps.settings, publicUrl: '' } }, cursor, FEED_MAX_LIMIT)
          if (!page.changes.length) break
          const bytes = new TextEncoder().encode(page.changes.map((c) => JSON.stringify(c)).join('\n') + '\n')
          rows.push({ name: rowsName(chunk), sha256: sha256(bytes), changes: page.changes.length })
          await addEntry(pack, rowsName(chunk), bytes)
          for (const c of page.changes) {
            if (c.archive) wanted.set(c.archive.sha256, c.archive.size)
            else if (c.kind === 'version' && wouldBeFetched(c.entity)) missing++
          }
          cursor = page.next
        }
        const archives: BundleManifest['archives'] = []
        for (const [sha] of wanted) {
          const blob = await deps.blobs.open(sha)
          if (!blob) {
            missing++
            continue
          }
          await addStreamEntry(pack, archiveName(sha), blob.size, blob.stream())
          archives.push({ sha256: sha, size: blob.size })
        }
        const manifest: BundleManifest = {
          format: BUNDLE_FORMAT,
          version: BUNDLE_VERSION,
          instance: instanceId,
          since,
          until: lastSerial,
          created_at: timestamp(deps),
          rows,
          archives,
        }
        await addEntry(pack, MANIFEST_NAME, new TextEncoder().encode(JSON.stringify(manifest, null, 1)))
        return { manifest, missingArchives: missing }
      })
    pack.finalize()
    await written
    return result
  } catch (err) {
    pack.destroy(err as Error)
    // The file failing first (a full disk, a path refused) makes the tar writer fail next: the file's error is the news.
    throw (
      (await written.then(
        () => undefined,
        (first: unknown) => first,
      )) ?? err
    )
  }
}

/** A tar entry as a web stream, pulled as it is read. */
function webStream(entry: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = entry[Symbol.asyncIterator]()
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await it.next()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel: () => void it.return?.(),
  })
}

async function readText(entry: Member): Promise<{ text: string; sha256: string }> {
  // Refused on its header: a member declaring more than a text may hold is not read at all.
  if ((entry.header.size ?? 0) > MAX_MEMBER_TEXT) throw new BundleError(`${entry.header.name}: a member of the bundle is too large`)
  const parts: Uint8Array[] = []
  let size = 0
  for await (const chunk of entry) {
    size += chunk.byteLength
    if (size > MAX_MEMBER_TEXT) throw new BundleError('a member of the bundle is too large')
    parts.push(chunk)
  }
  const bytes = Buffer.concat(parts)
  return { text: bytes.toString('utf8'), sha256: sha256(bytes) }
}

function parseManifest(text: string): BundleManifest {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new BundleError(`not a registry-mirror bundle: its manifest is not JSON (${(err as Error).message})`)
  }
  const parsed = v.safeParse(BundleManifestSchema, json)
  if (!parsed.success)
    throw new BundleError(
      `not a registry-mirror bundle of a known version (${v.getDotPath(parsed.issues[0]) ?? 'manifest'}: ${parsed.issues[0].message})`,
    )
  return parsed.output
}

/** What the first pass found: the manifest, the archives that passed the check (staged), and those refused, with why. */
interface Verified {
  manifest: BundleManifest
  formats: Map<string, 'zip' | 'tar.gz'>
  refused: Map<string, string>
}

/**
 * Pass 1: every member's hash against the manifest, every row parsed and checked (nothing is applied before all
 * are), archives staged (not visible) and checked on the way as a sync checks the archives it fetches.
 */
async function verify(
  deps: Deps,
  open: () => NodeJS.ReadableStream,
  staged: Map<string, StagedBlob>,
  signal: AbortSignal | undefined,
): Promise<Verified> {
  const rowHashes = new Map<string, string>()
  const rows = new RowsSeen()
  const sizes = new Map<string, number>()
  const formats = new Map<string, 'zip' | 'tar.gz'>()
  const refused = new Map<string, string>()
  const maxBytes = deps.settings.maxUploadBytes
  let manifest: BundleManifest | undefined
  try {
    for await (const entry of members(open, signal)) {
      const name = entry.header.name
      if (name === MANIFEST_NAME) manifest = parseManifest((await readText(entry)).text)
      else if (/^rows\/\d{6}\.ndjson$/.test(name)) {
        const { text, sha256 } = await readText(entry)
        rowHashes.set(name, sha256)
        rows.add(name, parseRows(name, text))
      } else if (/^archives\/[0-9a-f]{64}$/.test(name)) {
        const sha = name.slice('archives/'.length)
        const declared = entry.header.size ?? 0
        if (declared > maxBytes) throw new BundleError(`${name}: ${declared} bytes, more than the upload limit (${maxBytes} bytes)`)
        const blob = await deps.blobs.stage(webStream(entry), maxBytes)
        staged.set(sha, blob)
        if (blob.sha256 !== sha) throw new BundleError(`${name}: its bytes have SHA-256 ${blob.sha256}; the bundle is damaged`)
        sizes.set(sha, blob.size)
        const inspection = await inspectArchive(blob.localPath, deps.settings.archiveLimits)
        if (inspection.ok) formats.set(sha, inspection.format)
        else {
          refused.set(sha, inspection.reason)
          staged.delete(sha)
          await blob.discard()
        }
      } else throw new BundleError(`unexpected member "${name}" in the bundle`)
    }
  } catch (err) {
    throw asBundleError(err)
  }
  if (!manifest) throw new BundleError('the bundle has no manifest (cut short?)')
  for (const r of manifest.rows) {
    const seen = rowHashes.get(r.name)
    if (seen !== r.sha256)
      throw new BundleError(`${r.name}: ${seen ? `SHA-256 ${seen}, the manifest says ${r.sha256}` : 'missing'}; the bundle is damaged`)
  }
  if (rowHashes.size !== manifest.rows.length) throw new BundleError('the bundle holds rows its manifest does not list')
  for (const a of manifest.archives) {
    if (sizes.get(a.sha256) !== a.size)
      throw new BundleError(`${archiveName(a.sha256)}: missing or of the wrong size; the bundle is damaged`)
  }
  if (sizes.size !== manifest.archives.length) throw new BundleError('the bundle holds archives its manifest does not list')
  rows.checkManifest(manifest)
  return { manifest, formats, refused }
}

/** Pass 2: the rows again, as feed pages (checked in pass 1; their hashes again, in case the file changed since). */
async function* pages(open: () => NodeJS.ReadableStream, manifest: BundleManifest): AsyncGenerator<FeedPageItems> {
  const hashes = new Map(manifest.rows.map((r) => [r.name, r.sha256]))
  let since = manifest.since
  try {
    for await (const entry of members(open)) {
      if (!entry.header.name.startsWith('rows/')) {
        entry.resume()
        continue
      }
      const { text, sha256 } = await readText(entry)
      if (hashes.get(entry.header.name) !== sha256) throw new BundleError(`${entry.header.name}: the bundle changed while it was imported`)
      const changes = parseRows(entry.header.name, text)
      const last = changes[changes.length - 1]?.serial ?? since
      // The rows and the manifest were checked by their schemas already: the envelope is put together, not checked again.
      const envelope: FeedEnvelope = { instance: manifest.instance, changes, next: last, head: manifest.until }
      yield feedPageItems(envelope, since)
      since = last
    }
  } catch (err) {
    throw asBundleError(err)
  }
}

/** What an import did: as a sync's summary, with the bundle's manifest and how many of its archives were here already. */
export type ImportSummary = SyncSummary & { manifest: BundleManifest; archivesAlreadyHere: number }

export async function importBundle(
  deps: Deps,
  open: () => NodeJS.ReadableStream,
  opts: { onProgress?: (p: SyncProgress) => void; signal?: AbortSignal } = {},
): Promise<ImportSummary> {
  const started = performance.now()
  const staged = new Map<string, StagedBlob>()
  let verified: Verified
  let alreadyHere = 0
  try {
    verified = await verify(deps, open, staged, opts.signal)
    const { manifest } = verified
    const known = await findSource(deps.db, `bundle:${manifest.instance}`)
    const have = known?.cursor_serial ?? 0
    if (known && manifest.until < have) {
      const done = new BundleError(
        `this bundle ends at serial ${manifest.until}, before what was imported already (${have}): nothing to do`,
      )
      done.nothingToDo = true
      throw done
    }
    if (manifest.since > have) {
      throw new BundleError(
        `this bundle holds the changes after serial ${manifest.since} of registry ${manifest.instance}, but this registry has ` +
          `imported only up to serial ${have} from it: export again with --since ${have}`,
      )
    }
    // Carried bytes that are some version's archive here already (the same bundle imported again): not new here.
    alreadyHere = (await archivedAmong(deps.db, [...staged.keys()])).size
    if (opts.signal?.aborted) throw new ImportStopped('the import was stopped before anything was applied')
  } catch (err) {
    for (const blob of staged.values()) await blob.discard()
    throw err
  }
  const { manifest, formats, refused } = verified
  // Everything checked: the archives become durable (nothing refers to them yet), then the rows apply in order.
  const localArchives = new Map<string, { size: number; format: 'zip' | 'tar.gz' }>()
  try {
    // Held from before the commits to the last batch of rows (renewed by each): a sweep leaves these bytes alone.
    return await underBlobIntent(deps, [...staged.keys()], async (localIntent) => {
      for (const [sha, blob] of staged) {
        await blob.commit()
        localArchives.set(sha, { size: blob.size, format: formats.get(sha)! })
      }
      const summary = await applyBundle(deps, opts, { manifest, refused, localArchives, localIntent, started, open })
      return { ...summary, archivesAlreadyHere: alreadyHere }
    })
  } catch (err) {
    for (const blob of staged.values()) await blob.discard() // a no-op for those committed
    throw err
  }
}

async function applyBundle(
  deps: Deps,
  opts: { onProgress?: (p: SyncProgress) => void; signal?: AbortSignal },
  run: {
    manifest: BundleManifest
    refused: Map<string, string>
    localArchives: Map<string, { size: number; format: 'zip' | 'tar.gz' }>
    localIntent: HeldIntent
    started: number
    open: () => NodeJS.ReadableStream
  },
): Promise<SyncSummary & { manifest: BundleManifest }> {
  const { manifest, refused, localArchives, localIntent, started, open } = run
  const id = `bundle:${manifest.instance}`
  const source = await ensureSource(deps.db, id, 'bundle', timestamp(deps))
  await updateSource(deps.db, id, { last_attempt_at: timestamp(deps), upstream_instance: manifest.instance })
  const summary: SyncSummary = {
    source: id,
    kind: 'bundle',
    full: manifest.since === 0,
    complete: false,
    unreachable: false,
    changed: { publishers: 0, nodes: 0, versions: 0, removed: 0 },
    archives: {
      fetched: localArchives.size,
      bytes: [...localArchives.values()].reduce((n, a) => n + a.size, 0),
      refused: refused.size,
      failed: 0,
    },
    problems: [],
    seconds: 0,
  }
  let state: SyncProgress = { phase: 'metadata', done: 0, bytes: 0 }
  const ctx = {
    deps,
    source,
    summary,
    skipped: { nodes: new Set<string>(), publishers: new Set<string>() },
    progress: (p: Partial<SyncProgress>) => opts.onProgress?.((state = { ...state, ...p })),
    // Between batches, as a sync stops: each batch committed with the cursor, so that the same bundle finishes it.
    checkpoint: () => {
      if (opts.signal?.aborted)
        throw new ImportStopped('the import was stopped; what it applied stays, and importing the same bundle again completes it')
    },
  } as RunContext
  const rows = pages(open, manifest)
  const next = async () =>
    (await rows.next()).value ?? { instance: manifest.instance, next: manifest.until, head: manifest.until, items: [], problems: [] }
  try {
    const reader = readAhead(await next(), next, AHEAD)
    try {
      await followPages(ctx, reader, {
        full: manifest.since === 0,
        startSerial: manifest.since,
        head: manifest.until,
        localArchives,
        localIntent,
        refusedArchives: refused,
      })
    } finally {
      reader.close()
    }
  } finally {
    await rows.return(undefined)
  }
  await updateSource(deps.db, id, { cursor_serial: manifest.until, last_success_at: timestamp(deps), last_error: '' })
  summary.complete = true
  summary.seconds = (performance.now() - started) / 1000
  return { ...summary, manifest }
}
