/**
 * Checkpoints of a SQLite store in a worker thread (checkpoint-worker.ts), for the commands that write much at
 * once (sync, import). A WAL store copies its log into the database file at checkpoints, and the last connection
 * to close does the rest and waits for the file to reach the disk: after a first sync of 52,000 versions that
 * was 0.3-0.6 s of the command's time, with the run over. Done in another thread as the run goes, it overlaps the
 * run; what is left at close is the last few commits. The writer's own checkpoints stay as they were.
 */
import type { CheckpointReply, CheckpointRequest } from './checkpoint-worker'

/** Beside this file from source; beside main in the executable (an entrypoint of the build, named flat: scripts/build.ts). */
const WORKER = new URL('./checkpoint-worker.ts', import.meta.url).href

/** How often the log is copied: about as often as a sync commits a batch. */
const EVERY_MS = 250

export interface Checkpointer {
  /** Ends the thread after its connection is closed (the store's own close then finds itself the last one). */
  stop(): Promise<void>
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
