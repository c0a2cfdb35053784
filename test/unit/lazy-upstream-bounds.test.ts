/** A first download's waits stay under the server's idle timeout, whatever --sync-timeout says. */
import { expect, test } from 'bun:test'
import { IDLE_TIMEOUT_S } from '../../src/http/idle-timeout'
import { createLazyUpstream } from '../../src/services/mirror/lazy-upstream'
import { createLog } from '../../src/log'

const lazy = (timeoutS: number) =>
  createLazyUpstream({ http: { timeoutMs: timeoutS * 1000, attempts: 6 }, log: createLog({ write: () => {} }) })

test('the defaults: an answer within one timeout (30 s), all of it within 4 (110 s: under the 120 s idle timeout)', () => {
  const l = lazy(30)
  expect(l.http.options.deadlineMs).toBe(30_000)
  expect(l.http.options.attempts).toBe(2)
  expect(l.waitMs).toBe(110_000)
  expect(l.waitMs).toBeLessThan(IDLE_TIMEOUT_S * 1000)
})

test('a --sync-timeout of an hour (good for a sync run) does not hold a download past the idle timeout', () => {
  const l = lazy(3600)
  expect(l.http.options.deadlineMs).toBeLessThan(IDLE_TIMEOUT_S * 1000)
  expect(l.waitMs).toBeLessThan(IDLE_TIMEOUT_S * 1000)
})

test('a short --sync-timeout: 5 s for an answer, 20 s in all', () => {
  const l = lazy(5)
  expect(l.http.options.deadlineMs).toBe(5_000)
  expect(l.waitMs).toBe(20_000)
})
