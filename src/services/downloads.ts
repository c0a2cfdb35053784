/**
 * Download counts: an install adds one in memory; the counts are written to the store in one transaction at
 * most every interval and at shutdown. A crash loses at most the counts of that interval. A flush is fed like any
 * write (the change feed tells other instances and mirrors), but as a count change: the caches keep every rendered
 * node and only take the new numbers. The server's flushes are written in a thread of their own on a SQLite file
 * (store/download-writer.ts).
 */
import { sameThreadWriter, type DownloadWriter } from '../store/download-writer'
import { commitOutcomeUnknown } from '../store/postgres'
import { commitCounts, failedAfterCommit, type WriteDeps } from './changes'
import type { Deps } from './deps'

export const DOWNLOAD_FLUSH_MS = 1000

export interface DownloadCounter {
  /** One more download of the node (by its id as stored). */
  count(nodeId: string): void
  /** Writes the counts taken so far; resolves once they are committed (or kept for the next flush on failure). */
  flush(): Promise<void>
  /** Flushes every `ms` until stop(). */
  start(ms?: number): void
  /** Stops the timer and writes what is left. */
  stop(): Promise<void>
  /** Counts not written yet. */
  readonly pending: number
}

/** `writer`: where the batches are written (by default on the store's own handle). */
export function createDownloadCounter(
  deps: WriteDeps & Pick<Deps, 'log'>,
  writer: DownloadWriter = sameThreadWriter(deps.db),
): DownloadCounter {
  let counts = new Map<string, number>()
  let pending = 0
  let timer: ReturnType<typeof setInterval> | undefined
  /** Flushes run one after another: a shutdown flush waits for the timer's. */
  let last: Promise<void> = Promise.resolve()

  async function write() {
    if (!counts.size) return
    const taken = counts
    const takenCount = pending
    counts = new Map()
    pending = 0
    try {
      await commitCounts(deps, taken, writer)
    } catch (err) {
      if (failedAfterCommit(err)) {
        // Stored: only the index or the caches could not take the new counts (the store follower applies them next).
        deps.log.warn('downloads.flush_applied_late', { nodes: taken.size, error: (err as Error).message })
        return
      }
      if (commitOutcomeUnknown(err)) {
        // The database may have committed them before the connection went: written again, they would count twice.
        // Dropped instead, as a crash mid-flush drops them.
        deps.log.warn('downloads.flush_outcome_unknown', { nodes: taken.size, downloads: takenCount, error: (err as Error).message })
        return
      }
      // Kept for the next flush: a busy store loses no counts.
      for (const [id, n] of taken) counts.set(id, (counts.get(id) ?? 0) + n)
      pending += takenCount
      deps.log.warn('downloads.flush_failed', { nodes: taken.size, error: (err as Error).message })
    }
  }

  const counter: DownloadCounter = {
    count(nodeId) {
      counts.set(nodeId, (counts.get(nodeId) ?? 0) + 1)
      pending++
    },
    flush() {
      last = last.then(write)
      return last
    },
    start(ms = DOWNLOAD_FLUSH_MS) {
      timer ??= setInterval(() => void counter.flush(), ms)
    },
    async stop() {
      clearInterval(timer)
      timer = undefined
      await counter.flush()
    },
    get pending() {
      return pending
    },
  }
  return counter
}
