/**
 * Worker entry (see checkpointer.ts): a second connection to a SQLite store that copies the write-ahead log into
 * the database file every so often, PASSIVE (never waiting for, nor blocking, the writer), so that the writer's
 * thread neither does that copy nor waits for its fsync.
 */
import { Database } from 'bun:sqlite'

export type CheckpointRequest = { start: { path: string; everyMs: number } } | { stop: true }
export type CheckpointReply = { stopped: true }

declare const self: Worker

let db: Database | undefined
let timer: ReturnType<typeof setInterval> | undefined

function checkpoint() {
  try {
    db?.run('PRAGMA wal_checkpoint(PASSIVE)')
  } catch {
    // Busy or gone: the writer's own checkpoints (and its close) still copy everything.
  }
}

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  const message = event.data
  if ('start' in message) {
    try {
      db = new Database(message.start.path)
      db.run('PRAGMA busy_timeout = 5000')
      timer = setInterval(checkpoint, message.start.everyMs)
    } catch {
      db = undefined // no checkpoints from here: the writer's own remain
    }
  } else {
    clearInterval(timer)
    db?.close()
    db = undefined
    self.postMessage({ stopped: true } satisfies CheckpointReply)
  }
}
