/**
 * Worker entry (see download-writer.ts): a second connection to a SQLite store that writes the server's batches of
 * download counts, so that the server's thread neither runs those statements nor waits for their commit.
 */
import { WRITER_CHECKPOINT_PAGES } from './checkpointer'
import { openStoreWriter, type Store } from './db'
import { writeDownloadCounts } from './download-counts'

export type DownloadWriterRequest =
  { open: string } | { write: { id: number; counts: [nodeId: string, count: number][]; now: string } } | { close: true }
export type DownloadWriterReply =
  | { written: { id: number; totals: [nodeId: string, total: number][]; serials?: { first: number; last: number } } }
  | { failed: { id: number; message: string } }
  | { closed: true }

declare const self: Worker

let db: Store | undefined
/** One batch at a time, in the order they came. */
let queue: Promise<void> = Promise.resolve()

const reply = (message: DownloadWriterReply) => self.postMessage(message)

async function write({ id, counts, now }: { id: number; counts: [string, number][]; now: string }) {
  try {
    if (!db) throw new Error('the store is not open')
    const { totals, serials } = await writeDownloadCounts(db, new Map(counts), now)
    reply({ written: { id, totals: [...totals], serials } })
  } catch (err) {
    reply({ failed: { id, message: (err as Error).message } })
  }
}

self.onmessage = (event: MessageEvent<DownloadWriterRequest>) => {
  const message = event.data
  // Its batches' log is copied by the checkpoint thread (checkpointer.ts), as the store's handle's is: a copy after its
  // commit would hold up the write turn of this process's other writes.
  if ('open' in message) db = openStoreWriter(message.open, { autocheckpointPages: WRITER_CHECKPOINT_PAGES })
  else if ('write' in message) queue = queue.then(() => write(message.write))
  else
    queue = queue.then(async () => {
      await db?.destroy()
      db = undefined
      reply({ closed: true })
    })
}
