/** An error answer names what the caller sent, but keeps at most MAX_MESSAGE_CHARS of it: its beginning and its end. */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { AppError, MAX_MESSAGE_CHARS } from '../../src/errors'
import { makeTestApp, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => {
  t = await makeTestApp()
})
afterEach(() => t.cleanup())

test('a 404 for a 20,000-character id keeps the beginning and the end of its message, cut in the middle', async () => {
  const got = await t.call('GET', `/nodes/${'a'.repeat(20_000)}`)
  expect(got.status).toBe(404)
  const message = got.body.message as string
  expect(message.length).toBe(MAX_MESSAGE_CHARS + 1)
  expect(message).toMatch(/^node "a+…a+" not found$/)
})

test('a message at the bound is kept whole; a cut never splits a surrogate pair, in the message or its details', () => {
  const whole = 'x'.repeat(MAX_MESSAGE_CHARS)
  expect(new AppError(400, 'bad_request', whole).message).toBe(whole)
  // Pairs straddle both cuts: the head's last unit and the tail's first unit would each be half a pair.
  const line = `${'x'.repeat(MAX_MESSAGE_CHARS / 2 - 1)}${'😀'.repeat(600)}y`
  const cut = new AppError(400, 'bad_request', line).message
  expect(cut.isWellFormed()).toBe(true)
  expect(cut.startsWith(`${'x'.repeat(MAX_MESSAGE_CHARS / 2 - 1)}…😀`)).toBe(true)
  expect(cut.endsWith('😀y')).toBe(true)
  expect(cut.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS + 1)
  expect(new AppError(400, 'bad_request', 'm', {}, [line]).details[0]).toBe(cut)
})
