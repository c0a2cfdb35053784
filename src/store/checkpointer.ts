/**
 * Checkpoints of a SQLite store in a worker thread (checkpoint-worker.ts). A WAL store copies its log into the
 * database file at checkpoints, and the last connection to close does the rest and waits for the file to reach the
 * disk.
 * - The commands that write much at once (sync, import): after a first sync of 52,000 versions that was 0.3-0.6 s
 *   of the command's time, with the run over. Done in another thread as the run goes, it overlaps the run; what is
 *   left at close is the last few commits.
 * - The server: each second's download flush dirties thousands of pages across a large store, and the writer's own
 *   checkpoint after that commit held the event loop 120-170 ms of every second at 100,000 nodes.
 */
import { sql } from 'kysely'
import type { CheckpointReply, CheckpointRequest } from './checkpoint-worker'
import type { Store } from './db'

/** Beside this file from source; beside main in the executable (an entrypoint of the build, named flat: scripts/build.ts). */
const WORKER = new URL('./checkpoint-worker.ts', import.meta.url).href

/** How often the log is copied: about as often as a sync commits a batch. */
const EVERY_MS = 250

export interface Checkpointer {
  /** Ends the thread after its connection is closed (the store's own close then finds itself the last one). */
  stop(): Promise<void>
}

/**
 * The writers' own checkpoints (on their threads: the store's handle, and the download writer's) only once the log
 * passes this many pages: 64 MiB of 4 KiB pages.
 */
export const WRITER_CHECKPOINT_PAGES = 16384

/**
 * Checkpoints in another thread for the SQLite store at `path` (none for PostgreSQL: no path). The writer still
 * checkpoints itself when the log grows past WRITER_CHECKPOINT_PAGES, should this thread fall behind or fail.
 */
export async function checkpointInBackground(db: Store, path: string | undefined): Promise<Checkpointer | undefined> {
  if (!path) return undefined
  await sql`pragma wal_autocheckpoint = ${sql.raw(String(WRITER_CHECKPOINT_PAGES))}`.execute(db)
  return startCheckpointer(path)
}

export function startCheckpointer(path: string, everyMs = EVERY_MS): Checkpointer {
  const worker = new Worker(WORKER)
  // Never what keeps the process alive: it only helps.
  worker.unref()
  const send = (message: CheckpointRequest) => worker.postMessage(message)
  let ended = false
  const done = new Promise<void>((resolve) => {
    worker.addEventListener('message', (event: MessageEvent<CheckpointReply>) => {
      if (event.data.stopped) resolve()
    })
    // A failed thread has no connection left open.
    worker.addEventListener('error', () => resolve())
    worker.addEventListener('close', () => resolve())
  })
  send({ start: { path, everyMs } })
  return {
    async stop() {
      if (ended) return
      ended = true
      worker.ref() // until it answers: this process may have nothing else left to wait for
      send({ stop: true })
      await done
      worker.terminate()
    },
  }
}
