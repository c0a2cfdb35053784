import { expect, test } from 'bun:test'
import { ConsumerStalled, consumedWithin, FLUSHED_BYTES_PER_SECOND } from '../../src/upstream/consumed-within'

/** `count` chunks, one every `everyMs`; `cancelled` tells whether the reader let go of it. */
function slowSource(count: number, everyMs: number) {
  const state = { cancelled: false }
  let sent = 0
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await Bun.sleep(everyMs)
      controller.enqueue(new Uint8Array([sent++]))
      if (sent === count) controller.close()
    },
    cancel: () => void (state.cancelled = true),
  })
  return { stream, state }
}

const never = () => new Promise<never>(() => {})

test("the upstream's pauses are not the consumer's: a slow source read at once is consumed whole", async () => {
  const { stream } = slowSource(4, 80) // each chunk takes longer than the consumer may keep the turn
  const read = await consumedWithin(stream, 50, async (body) => {
    const got: number[] = []
    for await (const chunk of body) got.push(...chunk)
    return got
  })
  expect(read).toEqual([0, 1, 2, 3])
})

test('a consumer that stops reading fails after idleMs, and the source is let go', async () => {
  const { stream, state } = slowSource(100, 1)
  const started = performance.now()
  const consumed = consumedWithin(stream, 100, async (body) => {
    await body.getReader().read()
    return never() // a write that never completes
  })
  await expect(consumed).rejects.toBeInstanceOf(ConsumerStalled)
  expect(performance.now() - started).toBeGreaterThanOrEqual(95)
  expect(performance.now() - started).toBeLessThan(1_000)
  expect(state.cancelled).toBe(true)
})

test('a consumer that never starts reading, or hangs after the end, fails too', async () => {
  await expect(consumedWithin(slowSource(1, 1).stream, 50, never)).rejects.toBeInstanceOf(ConsumerStalled)
  const afterEnd = consumedWithin(slowSource(2, 1).stream, 50, async (body) => {
    for await (const _ of body);
    return never() // the final sync of a file that never returns
  })
  await expect(afterEnd).rejects.toThrow('the bytes received were not taken within 50 ms')
})

test('a consumer that wakes up after it was given up finds the body failed', async () => {
  let woken: unknown
  let wake = () => {}
  const consumed = consumedWithin(slowSource(10, 1).stream, 50, async (body) => {
    const reader = body.getReader()
    await reader.read()
    await new Promise<void>((resolve) => (wake = resolve))
    woken = await reader.read().catch((err: unknown) => err)
    return 'done'
  })
  await expect(consumed).rejects.toBeInstanceOf(ConsumerStalled)
  wake()
  await Bun.sleep(10)
  expect(woken).toBeInstanceOf(ConsumerStalled)
})

test('what the consumer returns or throws is the answer', async () => {
  expect(await consumedWithin(slowSource(1, 1).stream, 50, async () => 7)).toBe(7)
  const failing = consumedWithin(slowSource(1, 1).stream, 50, async () => {
    throw new Error('refused')
  })
  await expect(failing).rejects.toThrow('refused')
  await Bun.sleep(80) // no stall reported after the consumer's end
})

test("the turn after the body's end grows with the bytes received: a large file's final sync is not cut", async () => {
  // 256 KiB: the final turn may last idleMs and a quarter of a second more.
  expect(FLUSHED_BYTES_PER_SECOND).toBe(1024 * 1024)
  const synced = await consumedWithin(new Blob([new Uint8Array(256 * 1024)]).stream(), 50, async (body) => {
    let size = 0
    for await (const chunk of body) size += chunk.byteLength
    await Bun.sleep(150) // the fsync of the whole file, longer than idleMs
    return size
  })
  expect(synced).toBe(256 * 1024)
})

test('a final sync that never returns still fails, once its allowance for the bytes received has passed', async () => {
  const started = performance.now()
  const afterEnd = consumedWithin(new Blob([new Uint8Array(128 * 1024)]).stream(), 50, async (body) => {
    for await (const _ of body);
    return never()
  })
  await expect(afterEnd).rejects.toBeInstanceOf(ConsumerStalled)
  const ms = performance.now() - started
  expect(ms).toBeGreaterThanOrEqual(170) // 50 ms, and 125 ms for 128 KiB
  expect(ms).toBeLessThan(1_000)
})
