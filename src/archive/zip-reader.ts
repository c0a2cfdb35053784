/** The file access under yauzl: small reads served from two cached windows, every byte counted against the budget and the file's size. */
import { close, read } from 'node:fs'
import yauzl from 'yauzl'
import type { InspectionBudget } from './budget'
import { ArchiveProblem } from './entries'

/** yauzl reads each central directory record and local header with two small reads; a window turns them into one read per 64 KiB. */
const WINDOW = 64 * 1024
/**
 * Reads that may legitimately cover bytes twice: the end-of-central-directory search (up to 64 KiB of tail,
 * which the central directory also covers) and one local header whose extra field runs into the next entry
 * (which is refused right after), both up to 64 KiB.
 */
const OVERLAP_ALLOWANCE = 256 * 1024

interface Window {
  at: number
  bytes: Buffer
}

type ReadCallback = (err: Error | null, bytesRead?: number) => void

/**
 * Only read() is served: entries are inflated in one call from their raw bytes (see zip.ts), so yauzl's
 * stream API, which would need _readStreamForRange, is never used.
 */
export class ZipFileReader extends yauzl.RandomAccessReader {
  /** The central directory and the local headers are read alternately; one window each. */
  private windows: Window[] = []
  private requested = 0

  constructor(
    private readonly fd: number,
    readonly size: number,
    private readonly budget: InspectionBudget,
  ) {
    super()
  }

  /** Counts `length` bytes; refuses once the reads add up to more than the file could explain. */
  private account(length: number): void {
    this.requested += length
    if (this.requested > this.size + OVERLAP_ALLOWANCE) {
      throw new ArchiveProblem('zip archive structure makes its reader read more than the whole file')
    }
    this.budget.read(length)
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null) => void): void {
    const done = callback as ReadCallback
    try {
      this.account(length)
    } catch (err) {
      return done(err as Error)
    }
    const serve = (w: Window) => {
      const from = position - w.at
      const n = Math.max(0, Math.min(length, w.bytes.length - from))
      w.bytes.copy(buffer, offset, from, from + n)
      done(null, n)
    }
    const cached = this.windows.find((w) => position >= w.at && position + length <= w.at + w.bytes.length)
    if (cached) return serve(cached)
    if (length > WINDOW) return read(this.fd, buffer, offset, length, position, (err, n) => done(err, n))
    const bytes = Buffer.allocUnsafe(Math.max(0, Math.min(WINDOW, this.size - position)))
    read(this.fd, bytes, 0, bytes.length, position, (err, n) => {
      if (err) return done(err)
      const w = { at: position, bytes: bytes.subarray(0, n) }
      this.windows = [w, ...this.windows.slice(0, 1)]
      serve(w)
    })
  }

  /** Exactly `length` bytes at `position`, or an ArchiveProblem when the file ends first. */
  readExactly(position: number, length: number): Promise<Buffer> {
    const out = Buffer.allocUnsafe(length)
    return new Promise((resolve, reject) =>
      this.read(out, 0, length, position, ((err: Error | null, n?: number) => {
        if (err) reject(err)
        else if (n !== length) reject(new ArchiveProblem('zip archive is truncated'))
        else resolve(out)
      }) as (err: Error | null) => void),
    )
  }

  override close(callback: (err: Error | null) => void): void {
    close(this.fd, callback)
  }
}
