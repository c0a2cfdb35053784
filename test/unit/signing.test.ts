import { describe, expect, test } from 'bun:test'
import { createUrlSigner, mediaType, readSignedQuery } from '../../src/blobs/signing'

const req = { method: 'PUT', path: '/archives/acme/pack/1.0.0/node.zip', contentType: 'application/zip', expires: 1_900_000_000 }
const signatureOf = (query: string) => new URLSearchParams(query).get('signature')!

describe('createUrlSigner', () => {
  const signer = createUrlSigner('secret')
  const sig = signatureOf(signer.sign(req))

  test('a signature verifies for exactly the signed request', () => {
    expect(signer.sign(req)).toStartWith(`expires=${req.expires}&signature=`)
    expect(signer.verify(req, sig)).toBe(true)
  })

  test.each([
    ['method', { method: 'POST' }],
    ['path', { path: '/archives/acme/pack/1.0.1/node.zip' }],
    ['content type', { contentType: 'application/octet-stream' }],
    ['expiry', { expires: req.expires + 1 }],
  ])('a changed %s fails', (_, change) => {
    expect(signer.verify({ ...req, ...change }, sig)).toBe(false)
  })

  test('a tampered or malformed signature fails, and another secret does not verify', () => {
    const flipped = (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1)
    expect(signer.verify(req, flipped)).toBe(false)
    expect(signer.verify(req, 'zz')).toBe(false)
    expect(createUrlSigner('other').verify(req, sig)).toBe(false)
  })

  test('readSignedQuery: expires and signature once each, anything else is an altered URL', () => {
    expect(readSignedQuery('?expires=1&signature=ab')).toEqual({ expires: 1, signature: 'ab', altered: false })
    expect(readSignedQuery('expires=1900000000&signature=ab')).toEqual({ expires: 1_900_000_000, signature: 'ab', altered: false })
    expect(readSignedQuery('')).toEqual({ expires: undefined, signature: undefined, altered: false })
    for (const query of [
      'expires=1&signature=ab&x=1',
      'x&expires=1&signature=ab',
      'expires=1&expires=1&signature=ab',
      'expires=1&signature=ab&signature=ab',
      'expires=1&signature=ab&=',
    ]) {
      expect(readSignedQuery(query).altered).toBe(true)
    }
  })

  test('readSignedQuery: an expiry spelt otherwise than the server signs it reads as none', () => {
    for (const spelling of [
      '+1900000000',
      '01900000000',
      '1900000000.0',
      '1.9e9',
      ' 1900000000',
      '0',
      '-1',
      '0x71',
      '',
      '99999999999999999',
    ]) {
      expect(readSignedQuery(`expires=${encodeURIComponent(spelling)}&signature=ab`).expires).toBeUndefined()
    }
  })

  test('mediaType drops parameters and case', () => {
    expect(mediaType('Application/ZIP; charset=binary')).toBe('application/zip')
    expect(mediaType(undefined)).toBe('')
  })
})
