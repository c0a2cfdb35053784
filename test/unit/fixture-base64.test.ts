/** The base64 check of fixture archives: one pass over any length, the alphabet and padding of RFC 4648. */
import { expect, test } from 'bun:test'
import { isBase64 } from '../../src/domain/fixture'

test('base64 of any length is taken; anything else in it, or a wrong length or padding, is not', () => {
  for (const bytes of [0, 1, 2, 3, 100, 12 * 1024 * 1024]) {
    expect(isBase64(Buffer.alloc(bytes, 0xfb).toString('base64'))).toBe(true)
  }
  for (const text of ['abc', 'ab=c', 'a===', 'ab c', 'ab-_', 'abé=', '====', `${'A'.repeat(12 * 1024 * 1024)}!AAA`]) {
    expect(isBase64(text)).toBe(false)
  }
})
