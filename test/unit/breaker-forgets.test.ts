/**
 * The breaker forgets a host found down that nobody asked for long after its probe was due: the upstream names
 * any number of hosts, and each would otherwise stay in memory, and in the gauge of hosts down, for good.
 */
import { expect, test } from 'bun:test'
import { createCircuitBreaker, FORGET_AFTER_PERIODS } from '../../src/upstream/circuit-breaker'

const down = { up: false, reason: 'cannot connect', timedOut: false } as const

function breaker() {
  let now = 1_000_000
  // A probe may stay out longer than a host takes to be forgotten, to show that one out is never forgotten.
  const b = createCircuitBreaker({ openMs: 30_000, probeMaxMs: 3 * FORGET_AFTER_PERIODS * 30_000, now: () => now })
  const fail = (url: string) => {
    const a = b.admit(url)
    if (a.go) a.settle(down)
  }
  return { b, fail, advance: (ms: number) => (now += ms) }
}

test('a host not asked for long after its probe was due is no longer counted down', () => {
  const { b, fail, advance } = breaker()
  fail('http://a.test/x')
  advance(30_000 + FORGET_AFTER_PERIODS * 30_000 - 1)
  expect(b.down()).toHaveLength(1)
  advance(1)
  expect(b.down()).toEqual([])
})

test('many hosts that went down once and were never asked again do not pile up', () => {
  const { b, fail, advance } = breaker()
  for (let i = 0; i < 1000; i++) {
    fail(`http://h${i}.test/x`)
    advance(1_000)
  }
  expect(b.down().length).toBeLessThanOrEqual(30 + FORGET_AFTER_PERIODS * 30 + 1)
})

test('asked again after that, a host is tried as any host, and found down anew', () => {
  const { b, fail, advance } = breaker()
  fail('http://a.test/x')
  const since = b.down()[0]!.since
  advance(30_000 + FORGET_AFTER_PERIODS * 30_000)
  expect(b.admit('http://a.test/y').go).toBe(true) // not a probe: a request that is turned away is not asked
  fail('http://a.test/y')
  expect(b.down()[0]!.since.getTime()).toBeGreaterThan(since.getTime())
})

test('a host being probed is never forgotten while its probe is out', () => {
  const { b, fail, advance } = breaker()
  fail('http://a.test/x')
  advance(30_000)
  expect(b.admit('http://a.test/x').go).toBe(true) // the probe, under way for long
  advance(FORGET_AFTER_PERIODS * 30_000 * 2)
  expect(b.down()).toHaveLength(1)
  expect(b.admit('http://a.test/x').go).toBe(false)
})
