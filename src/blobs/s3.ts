/**
 * Archive bytes in S3-compatible object storage, content-addressed under `<prefix>/blobs/<sha256>`. Uploads are
 * received into a local staging file (hashed on the way, and read there by the archive inspection), then sent as a
 * multipart upload with flat memory on commit: the object appears only when the upload completes, and the row
 * that points at it is committed after that. Any failure of the object store is a 503 until it comes back.
 */
import { S3Client } from 'bun'
import { open } from 'node:fs/promises'
import { AppError, storageUnavailable } from '../errors'
import { isSha256, type BlobInfo, type BlobStore, type StagedBlob } from './blob-store'
import type { BlobCache } from './disk-cache'

export interface S3Settings {
  /** `s3://bucket` or `s3://bucket/prefix`. */
  url: string
  /** Unset: AWS's endpoint for the region. */
  endpoint?: string
  region?: string
  accessKeyId?: string
  secretAccessKey?: string
  sessionToken?: string
}

/** Part size of multipart uploads (S3's smallest): memory per upload stays near that, whatever the archive's size. */
const PART_BYTES = 5 * 1024 * 1024

export function parseS3Url(url: string): { bucket: string; prefix: string } | undefined {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/.*)?$/.exec(url)
  if (!m) return undefined
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '')
  return { bucket: m[1]!, prefix: prefix ? `${prefix}/` : '' }
}

const codeOf = (err: unknown) => (err as { code?: string })?.code

/** Streams an object to a local file, a chunk at a time. */
async function download(file: ReturnType<S3Client['file']>, path: string): Promise<void> {
  const out = await open(path, 'wx', 0o600)
  try {
    for await (const chunk of file.stream()) await out.write(chunk)
  } finally {
    await out.close()
  }
}

/**
 * `staging` receives uploads (a disk store in the data directory): its commit is replaced by the upload to the
 * bucket. `cache` keeps local copies that downloads are sent from (without it, they stream from the bucket with no
 * Content-Length). `onError` hears of every failure of the object store before it becomes a 503.
 */
export function createS3BlobStore(
  settings: S3Settings,
  staging: BlobStore,
  opts: { cache?: BlobCache; onError?: (err: Error) => void } = {},
): BlobStore {
  const { cache, onError = () => {} } = opts
  const parsed = parseS3Url(settings.url)
  if (!parsed) throw new Error(`not an s3:// URL: ${settings.url}`)
  const client = new S3Client({
    bucket: parsed.bucket,
    endpoint: settings.endpoint,
    region: settings.region,
    accessKeyId: settings.accessKeyId,
    secretAccessKey: settings.secretAccessKey,
    sessionToken: settings.sessionToken,
  })
  const blobPrefix = `${parsed.prefix}blobs/`
  const fileOf = (sha: string) => client.file(blobPrefix + sha)
  const unavailable = (err: unknown): never => {
    if (err instanceof AppError) throw err
    onError(err as Error)
    throw storageUnavailable()
  }

  const probePrefix = `${parsed.prefix}probes/`

  /** The objects under `prefix`, a page (at most 1,000) at a time, in ascending key order (as S3 lists them). */
  async function* listed(prefix: string) {
    let continuationToken: string | undefined
    do {
      const page = await client.list({ prefix, continuationToken }).catch(unavailable)
      yield* page.contents ?? []
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined
    } while (continuationToken)
  }

  async function* inventory(): AsyncIterable<BlobInfo> {
    for await (const item of listed(blobPrefix)) {
      const sha256 = item.key.slice(blobPrefix.length)
      if (isSha256(sha256)) yield { sha256, size: item.size ?? 0, modifiedMs: Date.parse(item.lastModified ?? '') || 0 }
    }
  }

  /** Streams a local file to the object in parts; nothing is visible until the last part completes the upload. */
  async function upload(path: string, sha256: string, size: number): Promise<void> {
    const target = fileOf(sha256)
    // Content-addressed: the same bytes are already there (another instance, an earlier upload).
    const existing = await target.stat().catch((err) => (codeOf(err) === 'NoSuchKey' ? undefined : unavailable(err)))
    if (existing?.size === size) return
    const writer = target.writer({ partSize: PART_BYTES, queueSize: 2, retry: 2, type: 'application/octet-stream' })
    try {
      let pending = 0
      for await (const chunk of Bun.file(path).stream()) {
        writer.write(chunk)
        pending += chunk.byteLength
        // Wait for each part to leave before reading the next: memory stays flat.
        if (pending >= PART_BYTES) {
          await writer.flush()
          pending = 0
        }
      }
      await writer.end()
    } catch (err) {
      unavailable(err)
    }
  }

  return {
    evictsCopies: cache !== undefined,

    async stage(body, maxBytes): Promise<StagedBlob> {
      const staged = await staging.stage(body, maxBytes)
      return {
        ...staged,
        async commit() {
          await upload(staged.localPath, staged.sha256, staged.size)
          await staged.discard()
        },
      }
    },

    async open(sha256) {
      if (!isSha256(sha256)) return undefined
      const file = fileOf(sha256)
      const info = cache ? undefined : await file.stat().catch((err) => (codeOf(err) === 'NoSuchKey' ? undefined : unavailable(err)))
      // A slice knows its size; a bare S3File does not (and Bun would answer it as a redirect: see responseBody).
      if (!cache) return info ? file.slice(0, info.size) : undefined
      try {
        return await cache.get(sha256, (path) => download(file, path))
      } catch (err) {
        if (codeOf(err) === 'NoSuchKey') return undefined
        return unavailable(err)
      }
    },

    async has(sha256) {
      if (!isSha256(sha256)) return false
      return (
        (await fileOf(sha256)
          .stat()
          .catch((err) => (codeOf(err) === 'NoSuchKey' ? undefined : unavailable(err)))) !== undefined
      )
    },

    async delete(sha256) {
      if (!isSha256(sha256)) return
      await cache?.drop(sha256)
      await fileOf(sha256).delete().catch(unavailable)
    },

    async *list() {
      for await (const blob of inventory()) yield blob.sha256
    },

    inventory,

    async sweepProbes(maxAgeMs, { dryRun }) {
      let count = 0
      let bytes = 0
      const before = Date.now() - maxAgeMs
      for await (const item of listed(probePrefix)) {
        if (Date.parse(item.lastModified ?? '') >= before) continue
        if (!dryRun) await client.file(item.key).delete().catch(unavailable)
        count++
        bytes += item.size ?? 0
      }
      return { count, bytes }
    },

    sweep: (maxAgeMs) => staging.sweep(maxAgeMs),

    async check() {
      const probe = client.file(`${probePrefix}${crypto.randomUUID()}`)
      try {
        await probe.write('ok')
        await probe.delete()
        return (await staging.check()) === true
      } catch (err) {
        onError(err as Error)
        return false
      }
    },

    presign(sha256, expiresInSeconds) {
      return fileOf(sha256).presign({ expiresIn: expiresInSeconds, method: 'GET' })
    },
  }
}
