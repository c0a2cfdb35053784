/** Addresses as logs, messages, answers and output show them: no userinfo, query or fragment, the rest as given. */
import { expect, test } from 'bun:test'
import { withoutUrlSecrets } from '../../src/domain/urls'

test.each([
  ['https://s3.test/b/k.zip?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abc', 'https://s3.test/b/k.zip'],
  ['https://user:pass@cdn.test/x.zip?sig=1#part', 'https://cdn.test/x.zip'],
  ['https://TOKEN@cdn.test/x.zip', 'https://cdn.test/x.zip'],
  ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
  ['http://127.0.0.1:8080/?token=x', 'http://127.0.0.1:8080/'],
  ['bundle:0b1c2d', 'bundle:0b1c2d'],
  ['not an address', 'not an address'],
])('an address alone: %s', (given, shown) => {
  expect(withoutUrlSecrets(given)).toBe(shown)
})

test('addresses in a message, and the punctuation after them, as written', () => {
  const message =
    'https://r.test/a/node.zip?sig=1: cannot connect: UnsupportedRedirectProtocol fetching "https://u:p@h.test/y?t=2". ' +
    'See (https://docs.test/why?ref=x), or HTTP 403 from https://s3.test/k?X-Amz-Signature=abc (after 2 tries)'
  expect(withoutUrlSecrets(message)).toBe(
    'https://r.test/a/node.zip: cannot connect: UnsupportedRedirectProtocol fetching "https://h.test/y". ' +
      'See (https://docs.test/why), or HTTP 403 from https://s3.test/k (after 2 tries)',
  )
})

test('a hostile text is read in one pass: a quarter of a megabyte of near-addresses, within the test time', () => {
  const quarterMegabyte = 128 * 1024
  const dots = `http://h/p?${'.'.repeat(2 * quarterMegabyte)}x`
  expect(withoutUrlSecrets(dots)).toBe('http://h/p')
  const dashes = 'a-'.repeat(quarterMegabyte) // a scheme's characters, never followed by ://
  expect(withoutUrlSecrets(dashes)).toBe(dashes)
  const schemes = 'a://'.repeat(quarterMegabyte / 2)
  expect(withoutUrlSecrets(schemes)).toBe(schemes)
})
