/**
 * The sweep merges the blob store's listing with the hashes rows need, both ascending: a store that lists out of
 * order would have needed bytes taken for unreferenced ones, so it stops the check and the sweep instead.
 */
import { afterEach, expect, test } from 'bun:test'
import type { BlobInfo, BlobStore } from '../../src/blobs/blob-store'
import { checkBlobs, sweepBlobs } from '../../src/services/blob-sweep'
import { openStore, type Store } from '../../src/store/db'

let db: Store | undefined
afterEach(() => db?.destroy())

const listing: BlobInfo[] = ['b', 'a'].map((c) => ({ sha256: c.repeat(64), size: 1, modifiedMs: 0 }))
const deleted: string[] = []
const unordered = {
  async *inventory() {
    yield* listing
  },
  delete: async (sha256: string) => void deleted.push(sha256),
} as unknown as BlobStore

test('a listing out of SHA-256 order stops the check and the sweep before anything is deleted', async () => {
  db = await openStore(':memory:')
  const error = 'the blob store does not list in ascending SHA-256 order'
  await expect(checkBlobs({ db, blobs: unordered }, { now: new Date(), listed: 10 })).rejects.toThrow(error)
  await expect(sweepBlobs({ db, blobs: unordered }, { now: new Date(), olderThanMs: 0, dryRun: false })).rejects.toThrow(error)
  expect(deleted).toEqual([])
})
