/** A probe of a host found down is the host back once it answers, not once the archive's body has all come. */
import { expect, test } from 'bun:test'
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker'
import { createUpstreamHttp } from '../../src/upstream/http-client'

const URL_A = 'http://up.test/archives/a/b/1.0.0/node.zip'
const URL_B = 'http://up.test/archives/a/c/1.0.0/node.zip'
/** The test's host names are asked of no resolver. */
const resolve = async () => []

const answeringHost = (async () => new Response(new Uint8Array(10))) as unknown as typeof fetch
const drain = async (body: ReadableStream<Uint8Array>) => void (await new Response(body).arrayBuffer())

test('a probe is the host back once it answers, not once its body has all come', async () => {
  let now = 1_000_000
  const breaker = createCircuitBreaker({ openMs: 30_000, probeMaxMs: 110_000, now: () => now })
  const first = breaker.admit(URL_A)
  if (first.go) first.settle({ up: false, reason: 'cannot connect', timedOut: false })
  now += 30_000
  const http = createUpstreamHttp({ timeoutMs: 1_000, deadlineMs: 1_000, attempts: 2, breaker, fetch: answeringHost, resolve })
  let admittedDuringBody: boolean | undefined
  await http.download(URL_A, async (body) => {
    admittedDuringBody = breaker.admit(URL_B).go // the probe's body still coming
    await drain(body)
  })
  expect(admittedDuringBody).toBe(true)
  expect(breaker.down()).toEqual([])
})

test('a probe whose body is then cut off leaves the host up: the body is one transfer, the host answered', async () => {
  let now = 1_000_000
  const events: string[] = []
  const breaker = createCircuitBreaker({
    openMs: 30_000,
    probeMaxMs: 110_000,
    now: () => now,
    onDown: () => events.push('down'),
    onBack: () => events.push('back'),
  })
  const first = breaker.admit(URL_A)
  if (first.go) first.settle({ up: false, reason: 'cannot connect', timedOut: false })
  now += 30_000
  const cutting = (async () => new Response(new Uint8Array(10), { headers: { 'content-length': '100' } })) as unknown as typeof fetch
  const http = createUpstreamHttp({ timeoutMs: 1_000, deadlineMs: 1_000, attempts: 1, breaker, fetch: cutting, resolve })
  await expect(http.download(URL_A, drain)).rejects.toThrow('cut off')
  expect(breaker.down()).toEqual([])
  expect(events).toEqual(['down', 'back'])
})
