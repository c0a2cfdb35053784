/** The breaker of requests a person waits on: a host found down fails at once, one probe after the open period. */
import { expect, test } from 'bun:test'
import { createCircuitBreaker, type Admission } from '../../src/upstream/circuit-breaker'

function breaker() {
  let now = 1_000_000
  const events: string[] = []
  const b = createCircuitBreaker({
    openMs: 30_000,
    probeMaxMs: 110_000,
    now: () => now,
    onDown: (d) => events.push(`down ${d.host} ${d.reason}`),
    onBack: (host, ms) => events.push(`back ${host} ${ms}`),
  })
  return { b, events, advance: (ms: number) => (now += ms) }
}

const go = (a: Admission) => {
  if (!a.go) throw new Error(`refused: ${a.down.reason}`)
  return a
}
const URL_A = 'http://user:secret@a.test:8080/archives/x/y/1.0.0/node.zip?X-Amz-Signature=abc'
const down = { up: false, reason: 'cannot connect', timedOut: false } as const

test('closed: every request goes; a host that answers stays up', () => {
  const { b, events } = breaker()
  go(b.admit(URL_A)).settle({ up: true })
  go(b.admit(URL_A)).settle({ up: true })
  expect(b.down()).toEqual([])
  expect(events).toEqual([])
})

test('a failure opens it for that host only: the origin, never the path, query or credentials', () => {
  const { b, events } = breaker()
  go(b.admit(URL_A)).settle(down)
  const refused = b.admit('http://a.test:8080/other')
  expect(refused.go).toBe(false)
  if (refused.go) return
  expect(refused.down).toMatchObject({ host: 'http://a.test:8080', reason: 'cannot connect', timedOut: false })
  expect(refused.down.retryAt!.getTime() - refused.down.since.getTime()).toBe(30_000)
  expect(b.admit('http://b.test/archives/1').go).toBe(true)
  expect(events).toEqual(['down http://a.test:8080 cannot connect'])
})

test('after the open period one probe goes, the others are refused while it runs; its success closes it', () => {
  const { b, events, advance } = breaker()
  go(b.admit(URL_A)).settle(down)
  advance(29_999)
  expect(b.admit(URL_A).go).toBe(false)
  advance(1)
  const probe = go(b.admit(URL_A))
  const during = b.admit(URL_A)
  expect(during.go).toBe(false)
  if (!during.go) expect(during.down.retryAt).toBeUndefined() // a probe is under way
  advance(500)
  probe.settle({ up: true })
  expect(b.admit(URL_A).go).toBe(true)
  expect(b.down()).toEqual([])
  expect(events).toEqual(['down http://a.test:8080 cannot connect', 'back http://a.test:8080 30500'])
})

test('a failed probe opens another period, keeping since when; no second down event', () => {
  const { b, events, advance } = breaker()
  go(b.admit(URL_A)).settle(down)
  const since = b.down()[0]!.since
  advance(30_000)
  go(b.admit(URL_A)).settle({ up: false, reason: 'no answer within 30000 ms', timedOut: true })
  expect(b.admit(URL_A).go).toBe(false)
  expect(b.down()).toEqual([
    { host: 'http://a.test:8080', since, reason: 'no answer within 30000 ms', timedOut: true, retryAt: new Date(since.getTime() + 60_000) },
  ])
  expect(events).toHaveLength(1)
})

test('a probe that says nothing (stopped) lets the next request probe; a late failure of an older request does not extend the period', () => {
  const { b, advance } = breaker()
  const older = go(b.admit(URL_A))
  go(b.admit(URL_A)).settle(down)
  advance(30_000)
  go(b.admit(URL_A)).settle('unknown')
  const probe = go(b.admit(URL_A))
  older.settle(down) // sent before the host went down, failing only now
  expect(b.admit(URL_A).go).toBe(false) // the probe is still under way
  probe.settle({ up: true })
  expect(b.admit(URL_A).go).toBe(true)
})

test('settling twice counts once', () => {
  const { b, events, advance } = breaker()
  go(b.admit(URL_A)).settle(down)
  advance(30_000)
  const probe = go(b.admit(URL_A))
  probe.settle({ up: true })
  probe.settle(down)
  expect(b.down()).toEqual([])
  expect(events).toHaveLength(2)
})
