/**
 * Where the server writes its batches of download counts (services/downloads.ts). On a SQLite file, a connection in
 * a worker thread writes them (download-writer-worker.ts): at 100,000 nodes a second's batch of 3,000 installs
 * touches some 2,850 nodes' rows, index entries and feed entries, and on the server's own connection that held the
 * event loop 160-250 ms of every second. SQLite lets the server's connection read meanwhile (WAL); its writes wait
 * their turn (services/write-turn.ts). Elsewhere the batch runs on the store's own handle: PostgreSQL's statements do
 * not hold the loop, and a store in memory has one connection only. Should the thread fail, so does the batch in
 * hand (the counter keeps it for the next) and later ones are written on the store's handle.
 */
import type { Store } from './db'
import { writeDownloadCounts, type CountsWritten } from './download-counts'
import type { DownloadWriterReply, DownloadWriterRequest } from './download-writer-worker'

/** Beside this file from source; beside main in the executable (an entrypoint of the build, named flat: scripts/build.ts). */
const WORKER = new URL('./download-writer-worker.ts', import.meta.url).href

export interface DownloadWriter {
  /** Writes one batch in one transaction; resolves once it is committed. */
  write(counts: ReadonlyMap<string, number>, now: string): Promise<CountsWritten>
  /** Ends the thread, if any, after its connection is closed. */
  stop(): Promise<void>
}

/** The batch on the store's own handle. */
export const sameThreadWriter = (db: Store): DownloadWriter => ({
  write: (counts, now) => writeDownloadCounts(db, counts, now),
  stop: async () => {},
})

/** `path`: the store's SQLite file, or undefined (PostgreSQL, or a store in memory) for the store's own handle. */
export function startDownloadWriter(db: Store, path: string | undefined): DownloadWriter {
  if (!path) return sameThreadWriter(db)
  const fallback = sameThreadWriter(db)
  const worker = new Worker(WORKER)
  // Never what keeps the process alive, but while a batch is in hand (a shutdown waits for its last one).
  worker.unref()
  const send = (message: DownloadWriterRequest) => worker.postMessage(message)
  const waiting = new Map<number, { resolve(w: CountsWritten): void; reject(err: Error): void }>()
  let nextId = 0
  let failed = false
  let closed: (() => void) | undefined
  /** Set by the first stop(); the thread is kept referenced from then on, until it ends. */
  let stopping: Promise<void> | undefined

  const settle = (id: number) => {
    const entry = waiting.get(id)
    waiting.delete(id)
    if (!waiting.size && !stopping) worker.unref()
    return entry
  }
  worker.addEventListener('message', (event: MessageEvent<DownloadWriterReply>) => {
    const reply = event.data
    if ('written' in reply) {
      const { id, totals, serials } = reply.written
      settle(id)?.resolve({ totals: new Map(totals), serials })
    } else if ('failed' in reply) settle(reply.failed.id)?.reject(new Error(reply.failed.message))
    else closed?.()
  })
  const fail = (why: string) => {
    failed = true
    for (const id of [...waiting.keys()]) settle(id)?.reject(new Error(`the download writer thread ${why}`))
    closed?.()
  }
  worker.addEventListener('error', (event) => fail(`failed: ${event.message}`))
  worker.addEventListener('close', () => fail('ended'))
  send({ open: path })

  return {
    write(counts, now) {
      if (failed) return fallback.write(counts, now)
      const id = nextId++
      worker.ref()
      return new Promise<CountsWritten>((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        send({ write: { id, counts: [...counts], now } })
      })
    },
    stop() {
      // Once: a second call waits for the first (a second close would take the first one's answer).
      stopping ??= (async () => {
        if (!failed) {
          worker.ref()
          await new Promise<void>((resolve) => {
            closed = resolve
            send({ close: true })
          })
        }
        worker.terminate()
      })()
      return stopping
    },
  }
}
