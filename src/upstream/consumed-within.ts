/**
 * A transfer holds one of the client's places until its consumer is done with the body. The upstream's side of it is
 * bounded (a wait for each chunk, a pace); this bounds ours: the consumer (the blob store staging an archive) may keep
 * the turn at most `idleMs` at a time, from the body handed over to its first read, from each chunk to the next
 * read, and from the body's end (or failure) to its return. Past that (a disk write that never completes, a reader
 * that stopped reading) the transfer fails and its place is freed, whether or not the consumer ever returns.
 */

/** The consumer of a body kept the turn too long: our side stalled, not the upstream's (not retried, not blamed on it). */
export class ConsumerStalled extends Error {}

export async function consumedWithin<T>(
  source: ReadableStream<Uint8Array>,
  idleMs: number,
  consume: (body: ReadableStream<Uint8Array>) => Promise<T>,
): Promise<T> {
  const reader = source.getReader()
  let timer: ReturnType<typeof setTimeout> | undefined
  let settled = false
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
  const consumersTurn = () => {
    clearTimeout(timer)
    if (!settled) timer = setTimeout(stall, idleMs)
  }
  const body = new ReadableStream<Uint8Array>(
    {
      start: (controller) => void (consumer = controller),
      async pull(controller) {
        clearTimeout(timer) // the upstream's turn: its own bounds apply
        try {
          const { done, value } = await reader.read()
          if (done) controller.close()
          else controller.enqueue(value)
        } catch (err) {
          controller.error(err)
        } finally {
          consumersTurn()
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
