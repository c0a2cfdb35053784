/**
 * A probe of a host found down that never gets to ask (the client's one place held by a transfer that does not end:
 * an endless body sent within the pace) does not keep its host down for good: once it is older than the longest a download waits,
 * another download may probe. Real servers on 127.0.0.1, the host's behind a proxy that refuses connections.
 */
import { afterEach, expect, test } from 'bun:test'
import { createLog } from '../../src/log'
import { createLazyUpstream } from '../../src/services/mirror/lazy-upstream'
import { createCircuitBreaker, type Admission } from '../../src/upstream/circuit-breaker'
import { UpstreamDown } from '../../src/upstream/http-client'
import { eventually } from '../support/eventually'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy'

const servers: { stop(force?: boolean): void }[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.stop(true)
})

/** 1000 bytes; `endless`: 32 KiB every 50 ms (well within the pace) until it resolves. */
function archiveServer(endless?: Promise<void>) {
  const asked: string[] = []
  let ended = false
  endless?.then(() => (ended = true))
  const body = () =>
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        await Bun.sleep(50)
        if (ended) controller.close()
        else controller.enqueue(new Uint8Array(32 * 1024))
      },
    })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => (asked.push(new URL(req.url).pathname), new Response(endless ? body() : new Uint8Array(1000).fill(7))),
  })
  servers.push(server)
  return { base: `http://127.0.0.1:${server.port}`, port: server.port!, asked }
}

const read = async (body: ReadableStream<Uint8Array>) => (await new Response(body).arrayBuffer()).byteLength
/** Whether the download is still under way after a moment (turned away, it has failed at once). */
const stillWaiting = (p: Promise<unknown>) =>
  Promise.race([
    p.then(
      () => 'done',
      (err: Error) => err,
    ),
    Bun.sleep(150).then(() => 'waiting' as const),
  ])

test('a probe stuck behind a place that is never freed: past the longest wait of a download, another probes', async () => {
  let release!: () => void
  const cdn = archiveServer(new Promise<void>((resolve) => (release = resolve)))
  const upstream = archiveServer()
  const proxy: TcpProxy = startTcpProxy({ hostname: '127.0.0.1', port: upstream.port })
  servers.push(proxy)
  const host = `http://127.0.0.1:${proxy.port}`
  // A download waits 1 s (4 timeouts); a host found down is asked again after 300 ms; one place.
  const lazy = createLazyUpstream({
    http: { timeoutMs: 250, attempts: 1, concurrency: 1 },
    openMs: 300,
    log: createLog({ write: () => {} }),
  })
  expect(lazy.waitMs).toBe(1_000)

  proxy.cut()
  await expect(lazy.http.download(`${host}/a.zip`, read)).rejects.toMatchObject({ kind: 'unreachable' })
  expect(lazy.breaker.down()).toHaveLength(1)
  // The one place, taken by a transfer from another host that does not end.
  const stuck = lazy.http.download(`${cdn.base}/stuck.zip`, read)
  await eventually(async () => cdn.asked.length === 1, { what: 'the stuck transfer under way' })
  proxy.restore()
  await Bun.sleep(350) // the open period over: the next download is the probe
  const probe = lazy.http.download(`${host}/b.zip`, read)
  expect(await stillWaiting(probe)).toBe('waiting') // for the place
  // While it is out, the others are turned away at once.
  expect(await stillWaiting(lazy.http.download(`${host}/c.zip`, read))).toBeInstanceOf(UpstreamDown)

  await Bun.sleep(lazy.waitMs) // the probe is older than any download waits
  const next = lazy.http.download(`${host}/c.zip`, read)
  expect(await stillWaiting(next)).toBe('waiting') // admitted: the probe now, behind the same place
  expect(lazy.breaker.down()).toMatchObject([{ host }])

  release() // the transfer ends: everything queued goes, and the host is found up
  await stuck
  expect(await probe).toBe(1000)
  expect(await next).toBe(1000)
  expect(lazy.breaker.down()).toEqual([])
  expect(upstream.asked).toEqual(['/b.zip', '/c.zip'])
})

test('a probe replaced by a later one no longer decides, but for an answer: that is the host back', () => {
  let now = 1_000_000
  const b = createCircuitBreaker({ openMs: 30_000, probeMaxMs: 110_000, now: () => now })
  const go = (a: Admission) => {
    if (!a.go) throw new Error(`turned away: ${a.down.reason}`)
    return a
  }
  go(b.admit('http://a.test/1')).settle({ up: false, reason: 'cannot connect', timedOut: false })
  now += 30_000
  const old = go(b.admit('http://a.test/2'))
  now += 109_999
  expect(b.admit('http://a.test/3').go).toBe(false)
  now += 1
  const probe = go(b.admit('http://a.test/3'))
  expect(b.admit('http://a.test/4').go).toBe(false) // one probe at a time still
  old.settle('unknown')
  expect(b.admit('http://a.test/4').go).toBe(false) // the old one's silence does not free the new one's turn
  old.settle({ up: false, reason: 'no answer', timedOut: true })
  expect(b.down()).toMatchObject([{ reason: 'cannot connect', retryAt: undefined }]) // nor does its late failure
  probe.settle({ up: false, reason: 'refused again', timedOut: false })
  expect(b.down()).toMatchObject([{ reason: 'refused again', retryAt: new Date(now + 30_000) }])

  const stale = ((now += 30_000), go(b.admit('http://a.test/5')))
  now += 110_000
  const next = go(b.admit('http://a.test/6'))
  stale.answered() // it asked at last, and the host answered
  expect(b.down()).toEqual([])
  next.settle({ up: true })
})
