/**
 * Archives sent from a local copy of object storage (serve's --storage-cache-bytes): a download remembered by the
 * archive lookup keeps being served after the copy it was sent from is evicted (least recently used out), here with
 * a copy store standing in for the bucket; it was sent from the removed file, a 500 on every download of that archive
 * until its node changed.
 */
import { afterEach, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BlobStore } from '../../src/blobs/blob-store'
import { createBlobCache } from '../../src/blobs/disk-cache'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'

let t: TestApp
afterEach(() => t.cleanup())

/** A bucket (on disk) whose downloads are sent from a local copy holding one archive at a time. */
function bucketWithSmallCopy(dir: string): BlobStore {
  const bucket = createDiskBlobStore(join(dir, 'bucket'))
  const copies = createBlobCache(join(dir, 'copies'), 1)
  return {
    ...bucket,
    evictsCopies: true,
    async open(sha) {
      const stored = await bucket.open(sha)
      return stored && copies.get(sha, (path) => Bun.write(path, stored).then(() => {}))
    },
  }
}

test('an archive remembered by the lookup is still sent once its local copy was evicted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-copy-'))
  t = await makeTestApp({ dir, deps: { blobs: bucketWithSmallCopy(dir) } })
  const { pat } = await aliceWithPublisher(t)
  const zips = new Map<string, Uint8Array<ArrayBuffer>>()
  for (const node of ['first', 'second']) {
    const bytes = makeZip(samplePack([{ name: `${node}.bin`, data: crypto.getRandomValues(new Uint8Array(2048)) }]))
    zips.set(node, bytes)
    await publishActive(t, { pat, node, version: '1.0.0', bytes })
  }
  const download = async (node: string) => {
    const res = await t.app.request(`/archives/acme/${node}/1.0.0/node.zip`)
    return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) }
  }
  expect(await download('first')).toEqual({ status: 200, bytes: zips.get('first')! })
  // The second archive's copy takes the first one's place.
  expect(await download('second')).toEqual({ status: 200, bytes: zips.get('second')! })
  expect(await download('first')).toEqual({ status: 200, bytes: zips.get('first')! })
  expect(await download('second')).toEqual({ status: 200, bytes: zips.get('second')! })
})
