/** Archives of a mirrored registry-mirror are fetched through the address synced from, not the upstream's public URL. */
import { describe, expect, test } from 'bun:test'
import { archiveUrlThrough } from '../../src/upstream/feed-client'

describe('archiveUrlThrough', () => {
  const base = 'http://10.0.0.5:8080'
  test('an address of the archive route is taken through the base, with or without a prefix, its query kept', () => {
    expect(archiveUrlThrough('http://0.0.0.0:8080/archives/acme/pack/1.0.0/node.zip', base)).toBe(
      'http://10.0.0.5:8080/archives/acme/pack/1.0.0/node.zip',
    )
    expect(archiveUrlThrough('https://example.org/registry/archives/a%20b/pack/1.0.0-rc.1/node.zip?x=1', `${base}/mirror`)).toBe(
      'http://10.0.0.5:8080/mirror/archives/a%20b/pack/1.0.0-rc.1/node.zip?x=1',
    )
  })

  test('any other address is kept as the upstream gave it', () => {
    for (const url of [
      'https://storage.example.com/bucket/pack-1.0.0.zip',
      'http://0.0.0.0:8080/files/acme/pack/1.0.0/node.zip',
      'http://0.0.0.0:8080/archives/acme/pack/1.0.0/other.zip',
      'http://0.0.0.0:8080/archives/pack/1.0.0/node.zip',
      'not a url',
    ]) {
      expect(archiveUrlThrough(url, base)).toBe(url)
    }
  })
})
