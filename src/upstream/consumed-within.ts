/**
 * A transfer holds one of the client's places until its consumer is done with the body. The upstream's side of it is
 * bounded (a wait for each chunk, a pace); this bounds ours: the consumer (the blob store staging an archive) may keep
 * the turn at most `idleMs` at a time, from the body handed over to its first read, from each chunk to the next
 * read, and from the body's end (or failure) to its return, which may take longer (FLUSHED_BYTES_PER_SECOND). Past
 * that (a disk write that never completes, a reader that stopped reading) the transfer fails and its place is freed,
 * whether or not the consumer ever returns.
 */

/**
 * From the body's end, the consumer writes out what the system still holds of the file (its fsync: all of it, when
 * the archive came faster than the disk takes it), which takes time in proportion to its size: that turn may last, on
 * top of `idleMs`, as long as writing the bytes received at this rate (a 200 MiB archive, 200 s more). One `idleMs`
 * alone cut every large archive short on a slow but healthy disk, each download fetching it all again in vain.
 */
export const FLUSHED_BYTES_PER_SECOND = 1024 * 1024

/** The consumer of a body kept the turn too long: our side stalled, not the upstream's (not retried, not blamed on it). */
export class ConsumerStalled extends Error {}

export async function consumedWithin<T>(
  source: ReadableStream<Uint8Array>,
  idleMs: number,
  consume: (body: ReadableStream<Uint8Array>) => Promise<T>,
  /** Told once the body has all come (or failed): the consumer's last turn begins. */
  onEnd?: () => void,
): Promise<T> {
  const reader = source.getReader()
  let timer: ReturnType<typeof setTimeout> | undefined
  let settled = false
  let received = 0
  let consumer!: ReadableStreamDefaultController<Uint8Array>
  let stalled: (err: ConsumerStalled) => void = () => {}
  const failed = new Promise<never>((_, reject) => (stalled = reject))
  const stall = () => {
    const err = new ConsumerStalled(`the bytes received were not taken within ${idleMs} ms (where they are written stalled)`)
    reader.cancel(err).catch(() => {}) // the upstream's connection goes
    try {
      consumer.error(err) // a consumer that wakes up fails, and cleans up after itself
    } catch {} // the body had ended already
    stalled(err)
  }
  const consumersTurn = (flushMs = 0) => {
    clearTimeout(timer)
    if (!settled) timer = setTimeout(stall, idleMs + flushMs)
  }
  const body = new ReadableStream<Uint8Array>(
    {
      start: (controller) => void (consumer = controller),
      async pull(controller) {
        clearTimeout(timer) // the upstream's turn: its own bounds apply
        let ended = true
        try {
          const { done, value } = await reader.read()
          if (done) controller.close()
          else {
            ended = false
            received += value.byteLength
            controller.enqueue(value)
          }
        } catch (err) {
          controller.error(err)
        } finally {
          consumersTurn(ended ? (received * 1000) / FLUSHED_BYTES_PER_SECOND : 0)
          if (ended) onEnd?.()
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    // Read only when the consumer asks: a chunk waiting in a queue would hide a consumer that stopped asking.
    { highWaterMark: 0 },
  )
  consumersTurn()
  try {
    return await Promise.race([consume(body), failed])
  } finally {
    settled = true
    clearTimeout(timer)
  }
}
