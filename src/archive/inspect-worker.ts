/** Worker entry: runs the archive check for each request the pool sends, one at a time, and answers with the verdict. */
import type { ArchiveLimits } from './entries'
import { checkArchive, type Inspection } from './check'

export interface InspectRequest {
  id: number
  path: string
  limits: ArchiveLimits
}

/**
 * `ready` is sent once the worker has loaded; `fault` is a failure of the check itself (an unreadable file),
 * not a verdict on the archive.
 */
export type InspectReply = { ready: true } | { id: number; inspection: Inspection } | { id: number; fault: string }

declare const self: Worker

// Installed before anything is awaited: a message that arrives with no handler is dropped.
self.onmessage = async (event: MessageEvent<InspectRequest>) => {
  const { id, path, limits } = event.data
  let reply: InspectReply
  try {
    reply = { id, inspection: await checkArchive(path, limits) }
  } catch (err) {
    reply = { id, fault: err instanceof Error ? err.message : String(err) }
  }
  self.postMessage(reply)
  // Whatever the archive made this thread allocate is released before the next one comes: the heap of a
  // long-lived worker stays at its idle size instead of growing with each hostile upload.
  Bun.gc(true)
}
self.postMessage({ ready: true } satisfies InspectReply)
