/**
 * The deadline of a first download's tries is the upstream's time, not the time a request spent in our own queue
 * (every slot taken by long transfers): a host that answers is not found timing out for it.
 */
import { expect, test } from 'bun:test'
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker'
import { createUpstreamHttp } from '../../src/upstream/http-client'

const URL_A = 'http://up.test/archives/a/b/1.0.0/node.zip'
const URL_B = 'http://up.test/archives/a/c/1.0.0/node.zip'
/** The test's host names are asked of no resolver. */
const resolve = async () => []

/** A host that answers every request 20 ms after it is asked (unless the request is abandoned first). */
const answeringHost = (async (_url: string, init: RequestInit) => {
  await Bun.sleep(20)
  if (init.signal?.aborted) throw new DOMException('aborted', 'AbortError')
  return new Response(new Uint8Array(10))
}) as unknown as typeof fetch

const drain = async (body: ReadableStream<Uint8Array>) => void (await new Response(body).arrayBuffer())

/** The host, but URL_A's body is a long transfer: 16 KiB every 50 ms (well within the pace) for `ms`. */
const longTransferOfA = (host: typeof fetch, ms: number) =>
  (async (url: string, init: RequestInit) => {
    if (url !== URL_A) return host(url, init)
    const ends = performance.now() + ms
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await Bun.sleep(50)
        if (performance.now() >= ends) controller.close()
        else controller.enqueue(new Uint8Array(16 * 1024))
      },
    })
    return new Response(body)
  }) as unknown as typeof fetch

test('a request that waited out its deadline in our queue is not the host timing out', async () => {
  const breaker = createCircuitBreaker({ openMs: 30_000, probeMaxMs: 110_000 })
  const fetch = longTransferOfA(answeringHost, 400)
  const http = createUpstreamHttp({ concurrency: 1, timeoutMs: 200, deadlineMs: 200, attempts: 2, breaker, fetch, resolve })
  // The one slot is held by a transfer that takes longer than the deadline of the request behind it.
  const long = http.download(URL_A, drain)
  const queued = http.download(URL_B, drain)
  await long
  await queued // the host answers in 20 ms: it was our queue, not the host
  expect(breaker.down()).toEqual([])
})

test('a retry whose slot comes after the deadline is not tried: the host is down for what it did', async () => {
  const breaker = createCircuitBreaker({ openMs: 30_000, probeMaxMs: 110_000 })
  let refused = 0
  const refusingB = (async (url: string, init: RequestInit) => {
    if (url === URL_B) throw (refused++, new Error('connection refused'))
    return answeringHost(url, init)
  }) as unknown as typeof fetch
  const fetch = longTransferOfA(refusingB, 500)
  const http = createUpstreamHttp({ concurrency: 1, timeoutMs: 300, deadlineMs: 300, attempts: 2, backoffMs: 1, breaker, fetch, resolve })
  const first = http.download(URL_B, drain).catch((e: Error) => e)
  // Takes the slot while the first request waits out its backoff, and keeps it past that request's deadline.
  await Bun.sleep(0)
  const long = http.download(URL_A, drain)
  const err = (await first) as Error
  await long
  expect(refused).toBe(1)
  expect(err.message).toBe(`${URL_B}: cannot connect: connection refused (after 1 try, out of time)`)
  expect(breaker.down()).toMatchObject([{ timedOut: false }])
})
