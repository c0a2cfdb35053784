/**
 * A bounded local copy of blobs fetched from object storage, least recently used out first. Blobs are immutable
 * (named by their SHA-256), so a copy never goes stale. Downloads are sent from the copy as a local file: with
 * Content-Length and ranges, without copying through JavaScript (a streamed body loses its length in Bun.serve).
 */
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { rename, rm, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { newId } from '../domain/ids'
import { isSha256 } from './blob-store'
import { isAbandoned, OWNER } from './owner'

/** A partial copy of a process that may still be alive is removed at start once nothing was written to it this long. */
const ABANDONED_AFTER_MS = 60 * 60_000

export interface BlobCache {
  /** The local copy of `sha256`, made by `fill(path)` (which writes the whole blob there) when there is none. */
  get(sha256: string, fill: (path: string) => Promise<void>): Promise<Blob>
  drop(sha256: string): Promise<void>
}

/** A leftover that cannot be removed (no permission) is only untidy: the cache starts all the same. */
function removeLeftover(path: string) {
  try {
    rmSync(path, { force: true })
  } catch {}
}

export function createBlobCache(dir: string, maxBytes: number): BlobCache {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const entries = new Map<string, number>() // sha -> size, oldest use first (a Map keeps insertion order)
  let total = 0
  // Copies a previous run left are kept, oldest first. Partial ones are removed when no live process is filling them:
  // another process's cache on this directory (a command beside serve) may be, and its fill would fail.
  const found = readdirSync(dir)
    .map((name) => ({ name, info: statSync(join(dir, name), { throwIfNoEntry: false }) }))
    .sort((a, b) => (a.info?.mtimeMs ?? 0) - (b.info?.mtimeMs ?? 0))
  for (const { name, info } of found) {
    if (!info?.isFile()) continue
    if (isSha256(name)) {
      entries.set(name, info.size)
      total += info.size
    } else if (isAbandoned(name, info.mtimeMs, ABANDONED_AFTER_MS)) removeLeftover(join(dir, name))
  }
  const filling = new Map<string, Promise<void>>()

  /**
   * Least recently used out until the copies fit, but never `keep`: the blob just filled is about to be sent, and
   * one larger than the whole cache would otherwise be removed before it was read (a 500 for every download of an
   * archive over --storage-cache-bytes). It stays until the next fill, so the disk holds at most the bound plus one blob.
   */
  async function evict(keep: string) {
    for (const [sha, size] of entries) {
      if (total <= maxBytes) return
      if (sha === keep) continue
      entries.delete(sha)
      total -= size
      await rm(join(dir, sha), { force: true })
    }
  }

  return {
    async get(sha256, fill) {
      const path = join(dir, sha256)
      const size = entries.get(sha256)
      if (size !== undefined) {
        entries.delete(sha256)
        const file = Bun.file(path)
        // A stat: another process on this data directory (a command beside serve) keeps its own account of the copies
        // and may have evicted this one. It is then fetched again; it was sent from the missing file (a 500) until this
        // process evicted it itself.
        if (await file.exists()) {
          entries.set(sha256, size)
          void utimes(path, new Date(), new Date()).catch(() => {})
          return file
        }
        total -= size
      }
      // One fill per blob however many ask at once.
      let pending = filling.get(sha256)
      if (!pending) {
        pending = (async () => {
          // Named after this process, so that another one starting on this directory can tell it is still filled.
          const tmp = join(dir, `${OWNER}${newId()}.part`)
          try {
            await fill(tmp)
            await rename(tmp, path)
          } catch (err) {
            await rm(tmp, { force: true })
            throw err
          }
          const bytes = Bun.file(path).size
          entries.set(sha256, bytes)
          total += bytes
          await evict(sha256)
        })().finally(() => filling.delete(sha256))
        filling.set(sha256, pending)
      }
      await pending
      return Bun.file(path)
    },

    async drop(sha256) {
      const size = entries.get(sha256)
      if (size === undefined) return
      entries.delete(sha256)
      total -= size
      await rm(join(dir, sha256), { force: true })
    },
  }
}
