/** The seam every archive storage plugs into (local disk, S3-compatible object storage): bytes by SHA-256, as streams and ranges. */

/** Bytes received and hashed, not yet visible: inspected, then committed or discarded. */
export interface StagedBlob {
  sha256: string
  size: number
  /**
   * A local file holding the bytes until commit() or discard(), for the archive inspection only (it reads
   * zip central directories by offset in a worker thread); nothing else uses it.
   */
  localPath: string
  /** Makes the bytes durable and visible under their SHA-256 (idempotent when they are already stored). */
  commit(): Promise<void>
  discard(): Promise<void>
}

/** A stored blob as a listing shows it. */
export interface BlobInfo {
  sha256: string
  size: number
  /** When its bytes were last written (a commit of the same bytes over them on disk renews it; on S3 it does not). */
  modifiedMs: number
  /**
   * Reached through a symlink (a linked directory or file under blobs/, on disk): served and counted as stored, but
   * never deleted by a sweep, which would delete outside the blob directory.
   */
  linked?: boolean
}

export interface BlobStore {
  /** Streams `body` to a staging file, hashing on the way; throws 413 past `maxBytes` and leaves nothing behind. */
  stage(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<StagedBlob>
  /** The stored bytes as a Blob (`size`, `slice(start, end)` for ranges, `stream()`), or undefined when missing. */
  open(sha256: string): Promise<Blob | undefined>
  /** Whether the blob is stored (in the bucket itself: a local copy of one deleted elsewhere does not count). */
  has(sha256: string): Promise<boolean>
  delete(sha256: string): Promise<void>
  /** The SHA-256 of every stored blob. */
  list(): AsyncIterable<string>
  /** Every stored blob in ascending SHA-256 order, streamed (a directory or a page of the listing at a time). */
  inventory(): AsyncIterable<BlobInfo>
  /** Object storage: removes (unless `dryRun`) the leftovers of killed /ready probes older than `maxAgeMs`. */
  sweepProbes?(maxAgeMs: number, opts: { dryRun: boolean }): Promise<{ count: number; bytes: number }>
  /** Removes staging leftovers (a process killed mid-upload): those of processes that have ended, and any older than `maxAgeMs`; returns how many. */
  sweep(maxAgeMs: number): Promise<number>
  /** Whether the store accepts writes (for /ready). */
  check(): Promise<boolean>
  /**
   * Whether a local file open() handed out may be removed while its blob is still stored (object storage's local
   * copies, evicted least recently used first): whoever keeps an opened blob opens it again before using it.
   */
  readonly evictsCopies?: boolean
  /** Object storage only: a URL that downloads the blob without credentials until it expires. */
  presign?(sha256: string, expiresInSeconds: number): string
}

/**
 * What to hand `new Response()` for an opened blob: a local file as itself (the server sends it without copying
 * it through JavaScript), object storage as a stream (Bun answers a bare S3 file body with a redirect, or not at all).
 */
export const responseBody = (blob: Blob): Blob | ReadableStream<Uint8Array> => ('presign' in blob ? blob.stream() : blob)

export const isSha256 = (s: string) => /^[0-9a-f]{64}$/.test(s)
