/**
 * A bucket listing of more than one page (S3 answers 1,000 keys at most): blobs check and sweep read every page, in
 * order, and skip the keys under the prefix that are not blobs. The test server (s3rver) makes its continuation
 * tokens with DES, which OpenSSL 3 offers only in its legacy provider: scripts/test-backends.sh loads it.
 */
import { afterEach, expect, test } from 'bun:test'
import { S3Client } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { createS3BlobStore, parseS3Url } from '../../src/blobs/s3'
import { describeOnBackends, testS3Settings } from '../support/backends'

const staging = mkdtempSync(join(tmpdir(), 'registry-mirror-listing-pages-'))
afterEach(() => rmSync(staging, { recursive: true, force: true }))

const hex = (n: number) => n.toString(16).padStart(64, '0')

describeOnBackends('a bucket listing of several pages', () => {
  test('1,001 blobs and keys that are not blobs: every blob listed once, in order', async () => {
    const settings = testS3Settings()
    const { bucket, prefix } = parseS3Url(settings.url)!
    const client = new S3Client({ ...settings, bucket })
    const keys = Array.from({ length: 1001 }, (_, i) => `${prefix}blobs/${hex(i + 1)}`)
    keys.push(`${prefix}blobs/README`, `${prefix}blobs/${hex(1)}/x`, `${prefix}blobs/${hex(2).toUpperCase()}x`)
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => client.file(k).write('b')))
    const blobs = createS3BlobStore(settings, createDiskBlobStore(staging))
    const listed: string[] = []
    for await (const blob of blobs.inventory()) listed.push(blob.sha256)
    expect(listed).toEqual(Array.from({ length: 1001 }, (_, i) => hex(i + 1)))
  }, 60_000)
})
