/** Archive bytes on local disk, content-addressed by SHA-256: streamed to tmp/, fsynced, renamed into blobs/. */
import { mkdirSync } from 'node:fs'
import { lstat, open, readdir, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { newId } from '../domain/ids'
import { payloadTooLarge } from '../errors'
import { isSha256, type BlobInfo, type BlobStore, type StagedBlob } from './blob-store'
import { isAbandoned, OWNER } from './owner'

const FILE_MODE = 0o600
const DIR_MODE = 0o700

/** A directory's names in byte order; none when it is gone meanwhile. Any other error (no permission) is thrown. */
async function sortedNames(path: string): Promise<string[]> {
  return ((await readdir(path).catch(gone)) ?? []).sort()
}

/** Undefined for a path removed meanwhile (ENOENT); any other error is thrown on: a listing never skips it silently. */
function gone(err: unknown): undefined {
  if ((err as { code?: string }).code === 'ENOENT') return undefined
  throw err
}

/**
 * `durable: false` skips the fsync of staged bytes: only for a data directory that is deleted when the process
 * exits (a CI fixture's), where surviving a power cut means nothing and the fsyncs are most of the start-up time.
 */
export function createDiskBlobStore(dir: string, opts: { durable?: boolean } = {}): BlobStore {
  const durable = opts.durable ?? true
  const blobDir = join(dir, 'blobs')
  const tmpDir = join(dir, 'tmp')
  mkdirSync(blobDir, { recursive: true, mode: DIR_MODE })
  mkdirSync(tmpDir, { recursive: true, mode: DIR_MODE })
  const pathOf = (sha: string) => join(blobDir, sha.slice(0, 2), sha.slice(2, 4), sha)

  async function stage(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<StagedBlob> {
    // Named after this process, so that a later start can tell a dead process's leftovers from live uploads.
    const tmp = join(tmpDir, `${OWNER}${newId()}.part`)
    const file = await open(tmp, 'wx', FILE_MODE)
    const hasher = new Bun.CryptoHasher('sha256')
    let size = 0
    try {
      for await (const chunk of body) {
        size += chunk.byteLength
        if (size > maxBytes) throw payloadTooLarge(`archive is larger than the limit of ${maxBytes} bytes`)
        hasher.update(chunk)
        await file.write(chunk)
      }
      if (durable) await file.sync()
    } catch (err) {
      await file.close()
      await rm(tmp, { force: true })
      throw err
    }
    await file.close()
    const sha256 = hasher.digest('hex')
    return {
      sha256,
      size,
      localPath: tmp,
      async commit() {
        mkdirSync(join(blobDir, sha256.slice(0, 2), sha256.slice(2, 4)), { recursive: true, mode: DIR_MODE })
        await rename(tmp, pathOf(sha256))
      },
      discard: () => rm(tmp, { force: true }),
    }
  }

  /**
   * One directory in memory at a time (at most 65,536 directories of a few files each under a million blobs). Only
   * what open and delete address is listed: files named by their hash at blobs/<2 hex>/<2 hex>/<hash>, so a
   * directory named like a blob or a misplaced file is not taken for one. Symlinks are followed, as serving follows
   * them, and what is reached through one is marked `linked`: a sweep never deletes it (it deleted files outside the
   * data directory through a linked directory).
   */
  async function* inventory(): AsyncIterable<BlobInfo> {
    const subdirs = async (path: string, linked: boolean) => {
      const out: { name: string; linked: boolean }[] = []
      for (const name of await sortedNames(path)) {
        if (!/^[0-9a-f]{2}$/.test(name)) continue
        const own = await lstat(join(path, name)).catch(gone)
        const info = own?.isSymbolicLink() ? await stat(join(path, name)).catch(gone) : own
        if (info?.isDirectory()) out.push({ name, linked: linked || own!.isSymbolicLink() })
      }
      return out
    }
    for (const a of await subdirs(blobDir, false)) {
      for (const b of await subdirs(join(blobDir, a.name), a.linked)) {
        for (const name of await sortedNames(join(blobDir, a.name, b.name))) {
          if (!isSha256(name) || !name.startsWith(a.name + b.name)) continue
          const path = join(blobDir, a.name, b.name, name)
          // Gone meanwhile (a sweep elsewhere): not stored.
          const own = await lstat(path).catch(gone)
          const info = own?.isSymbolicLink() ? await stat(path).catch(gone) : own
          if (!info?.isFile()) continue
          const linked = b.linked || own!.isSymbolicLink()
          yield { sha256: name, size: info.size, modifiedMs: info.mtimeMs, ...(linked && { linked }) }
        }
      }
    }
  }

  /** Whether the blob's path under blobs/ goes through a symlink (its directories or itself). */
  async function throughLink(sha256: string): Promise<boolean> {
    const parts = [sha256.slice(0, 2), sha256.slice(2, 4), sha256]
    for (let i = 1; i <= parts.length; i++) {
      if ((await lstat(join(blobDir, ...parts.slice(0, i))).catch(gone))?.isSymbolicLink()) return true
    }
    return false
  }

  return {
    stage,

    async open(sha256) {
      if (!isSha256(sha256)) return undefined
      const file = Bun.file(pathOf(sha256))
      return (await file.exists()) ? file : undefined
    },

    has: async (sha256) => isSha256(sha256) && (await Bun.file(pathOf(sha256)).exists()),

    async delete(sha256) {
      // Never through a symlink: what it points at is outside the blob directory, and not this store's to delete.
      if (isSha256(sha256) && !(await throughLink(sha256))) await rm(pathOf(sha256), { force: true })
    },

    async *list() {
      for await (const blob of inventory()) yield blob.sha256
    },

    inventory,

    async sweep(maxAgeMs) {
      let removed = 0
      const now = Date.now()
      for (const name of await readdir(tmpDir).catch(() => [])) {
        const path = join(tmpDir, name)
        const info = await stat(path).catch(() => undefined)
        const leftover = name.endsWith('.part') || name.endsWith('.probe')
        if (leftover && info && isAbandoned(name, info.mtimeMs, maxAgeMs, now)) {
          await rm(path, { force: true })
          removed++
        }
      }
      return removed
    },

    async check() {
      // Named after this process, as staging files are: a process killed between the write and the removal (a
      // health check every few seconds makes that likely) left one behind for good, and each crash added one.
      const probe = join(tmpDir, `${OWNER}${newId()}.probe`)
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
