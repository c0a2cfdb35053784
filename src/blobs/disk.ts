/** Archive bytes on local disk, content-addressed by SHA-256: streamed to tmp/, fsynced, renamed into blobs/. */
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { open, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { payloadTooLarge } from '../errors'
import { newId } from '../domain/ids'

export interface StoredBlob {
  sha256: string
  size: number
  path: string
}

export interface BlobStore {
  /** Streams `body` to disk, hashing on the way; throws 413 past `maxBytes` and leaves nothing behind. */
  put(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<StoredBlob>
  /** The file path of a stored blob, or undefined when it is missing. */
  locate(sha256: string): Promise<string | undefined>
  /** Whether the blob directory is writable (for /ready). */
  check(): Promise<boolean>
}

/** Uploads cut off by a crash leave `.part` files that nothing references; an hour old, they are swept. */
const STALE_PART_MS = 60 * 60 * 1000

function sweepStaleParts(tmpDir: string, nowMs: number): void {
  for (const name of readdirSync(tmpDir)) {
    const path = join(tmpDir, name)
    if (name.endsWith('.part') && nowMs - statSync(path).mtimeMs > STALE_PART_MS) rmSync(path, { force: true })
  }
}

export function createDiskBlobStore(dir: string, nowMs = Date.now()): BlobStore {
  const blobDir = join(dir, 'blobs')
  const tmpDir = join(dir, 'tmp')
  mkdirSync(blobDir, { recursive: true })
  mkdirSync(tmpDir, { recursive: true })
  sweepStaleParts(tmpDir, nowMs)
  const pathOf = (sha: string) => join(blobDir, sha.slice(0, 2), sha.slice(2, 4), sha)

  return {
    async put(body, maxBytes) {
      const tmp = join(tmpDir, `${newId()}.part`)
      const file = await open(tmp, 'wx', 0o644)
      const hasher = new Bun.CryptoHasher('sha256')
      let size = 0
      try {
        for await (const chunk of body) {
          size += chunk.byteLength
          if (size > maxBytes) throw payloadTooLarge(`archive is larger than the limit of ${maxBytes} bytes`)
          hasher.update(chunk)
          await file.write(chunk)
        }
        await file.sync()
      } catch (err) {
        await file.close()
        await rm(tmp, { force: true })
        throw err
      }
      await file.close()
      const sha256 = hasher.digest('hex')
      const path = pathOf(sha256)
      mkdirSync(join(blobDir, sha256.slice(0, 2), sha256.slice(2, 4)), { recursive: true })
      await rename(tmp, path)
      return { sha256, size, path }
    },

    async locate(sha256) {
      if (!/^[0-9a-f]{64}$/.test(sha256)) return undefined
      const path = pathOf(sha256)
      return (await stat(path).catch(() => undefined))?.isFile() ? path : undefined
    },

    async check() {
      const probe = join(tmpDir, `${newId()}.probe`)
      try {
        await Bun.write(probe, 'ok')
        await rm(probe)
        return true
      } catch {
        return false
      }
    },
  }
}
