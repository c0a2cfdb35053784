/**
 * A lazy mirror whose upstream is gone: what it holds serves as always; an archive it does not hold answers at
 * once, after the first download found the upstream down, saying since when and when it is asked again; one probe
 * after the open period finds it back. A real upstream on 127.0.0.1 behind a TCP proxy that refuses connections or
 * swallows them, with the real backoff between tries (the old client took 11.5 s and 3.5 minutes here).
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { HELD, lazyMirrorOfProxiedUpstream, MISSING, timed, type GoneUpstream } from '../support/gone-upstream'

let gone: GoneUpstream | undefined
afterEach(async () => {
  await gone?.stop()
  gone = undefined
})

describe('a lazy mirror whose upstream is gone', () => {
  test('refusing connections: the first download fails in about a second, the next at once, saying since when; what is held serves', async () => {
    gone = await lazyMirrorOfProxiedUpstream({ timeoutMs: 5_000 })
    const { mirror: m, held, proxy } = gone
    proxy.cut()
    const first = await timed(m, MISSING)
    expect(first.res.status).toBe(502)
    expect(first.body.error).toBe('upstream_failed')
    expect(first.body.message).toMatch(/the upstream has been unreachable since \S+Z; it is asked again in 30 s$/)
    expect(first.res.headers.get('retry-after')).toBe('30')
    expect(first.ms).toBeLessThan(3_000) // one retry after 0.25-0.5 s; it was 6 tries and 11.5 s
    for (let i = 0; i < 5; i++) {
      const again = await timed(m, MISSING)
      expect(again.res.status).toBe(502)
      expect(again.body.message).toBe(first.body.message.replace(/in \d+ s$/, again.body.message.match(/in \d+ s$/)[0]))
      expect(Number(again.res.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(again.ms).toBeLessThan(500) // not asked: it waited the same 11.5 s each time
    }
    const stillHeld = await timed(m, HELD)
    expect(stillHeld.res.status).toBe(200)
    expect(stillHeld.body).toEqual(held)
    expect((await m.call('GET', '/nodes/pack')).status).toBe(200)
    expect((await m.call('GET', '/nodes/held/install')).body.downloadUrl).toEndWith(HELD)
    const down = m.logs.map((l) => JSON.parse(l)).filter((l) => l.event === 'mirror.upstream_down')
    expect(down).toHaveLength(1)
    expect(down[0]).toMatchObject({ level: 'warn', upstream: gone.host, retry_in_s: 30 })
    expect(down[0].reason).not.toContain('/archives/') // a URL may carry a signature: the host only
  }, 60_000)

  test('black-holed (accepts, never answers): the first download is a 504 within one --sync-timeout, the next at once', async () => {
    gone = await lazyMirrorOfProxiedUpstream({ timeoutMs: 1_000 })
    const { mirror: m, held, proxy } = gone
    proxy.blackHole()
    const first = await timed(m, MISSING)
    expect(first.res.status).toBe(504)
    expect(first.body.error).toBe('upstream_timeout')
    expect(first.body.message).toMatch(/the upstream has been timing out since \S+Z; it is asked again in 30 s$/)
    expect(first.res.headers.get('retry-after')).toBe('30')
    expect(first.ms).toBeGreaterThan(900)
    expect(first.ms).toBeLessThan(4_000) // one timeout; it was 6 timeouts and their backoff (3.5 minutes by default)
    const again = await timed(m, MISSING)
    expect(again.res.status).toBe(504)
    expect(again.ms).toBeLessThan(500)
    expect((await timed(m, HELD)).body).toEqual(held)
  }, 60_000)

  test('back again: downloads fail at once for the open period, then one probe fetches the archive and it serves', async () => {
    gone = await lazyMirrorOfProxiedUpstream({ timeoutMs: 5_000, openMs: 1_500 })
    const { mirror: m, zip, proxy, upstream } = gone
    proxy.cut()
    const failedAt = performance.now()
    expect((await timed(m, MISSING)).res.status).toBe(502)
    proxy.restore()
    const before = upstream.requests.filter((p) => p === MISSING).length
    // Within the open period the upstream is not asked, though it is back.
    const early = await timed(m, MISSING)
    expect(early.res.status).toBe(502)
    expect(upstream.requests.filter((p) => p === MISSING)).toHaveLength(before)
    let ok: Awaited<ReturnType<typeof timed>> | undefined
    while (performance.now() - failedAt < 10_000) {
      const r = await timed(m, MISSING)
      if (r.res.status === 200) {
        ok = r
        break
      }
      expect(r.res.status).toBe(502)
      await Bun.sleep(100)
    }
    const backAfter = performance.now() - failedAt
    expect(ok?.body).toEqual(zip)
    expect(backAfter).toBeGreaterThan(1_400)
    expect(backAfter).toBeLessThan(1_500 + 3_000) // the open period and one probe
    expect(upstream.requests.filter((p) => p === MISSING)).toHaveLength(before + 1) // the probe, once
    const events = m.logs.map((l) => JSON.parse(l)).filter((l) => l.event.startsWith('mirror.upstream_'))
    expect(events.map((e) => e.event)).toEqual(['mirror.upstream_down', 'mirror.upstream_back'])
    expect(events[1]).toMatchObject({ level: 'info', upstream: gone.host })
  }, 60_000)
})
