/**
 * blobs check and sweep on a data directory as a careless operator or an attacker leaves it: symlinks, directories
 * and misplaced files under blobs/. Only files at blobs/<2 hex>/<2 hex>/<hash> are blobs; what is reached through a
 * symlink is counted as stored (it is served) but never deleted: that would be outside the data directory.
 */
import { afterEach, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { checkBlobs, sweepBlobs } from '../../src/services/blob-sweep'
import { openStore } from '../../src/store/db'
import type { Store } from '../../src/store/db'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('blob-layout')
let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
  dirs.cleanup()
})

const hash = (start: string, n: number) => start + String(n).padStart(64 - start.length, '0')
const LONG_AGO = new Date('2020-01-01T00:00:00Z')

/** A file (made) at `path`, dated long ago so that any sweep takes it for old. */
function oldFile(path: string, text: string): string {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, text)
  utimesSync(path, LONG_AGO, LONG_AGO)
  return path
}

async function dataDir() {
  const data = dirs.make()
  db = await openStore(join(data, 'registry.db'))
  return { data, deps: { db, blobs: createDiskBlobStore(data) } }
}

test('what a symlink under blobs/ reaches is stored but never deleted: the sweep stays inside the data directory', async () => {
  const { data, deps } = await dataDir()
  const outside = dirs.make()
  const precious = oldFile(join(outside, 'cd', hash('abcd', 1)), 'an archive of another registry')
  symlinkSync(outside, join(data, 'blobs', 'ab'))
  const linkedFile = oldFile(join(outside, 'file'), 'a file a link points at')
  mkdirSync(join(data, 'blobs', '12', '34'), { recursive: true })
  symlinkSync(linkedFile, join(data, 'blobs', '12', '34', hash('1234', 1)))

  const checked = await checkBlobs(deps, { now: new Date(), listed: 10 })
  expect(checked.stored.count).toBe(2)
  expect(checked.unreferenced.count).toBe(2)
  const swept = await sweepBlobs(deps, { now: new Date(), olderThanMs: 0, dryRun: false })
  expect(swept.removed.count).toBe(0)
  expect(swept.linked.count).toBe(2)
  expect(existsSync(precious)).toBe(true)
  expect(existsSync(linkedFile)).toBe(true)
  // Nor does a deletion asked for by hash (the hourly sweep of staged images asks so).
  await deps.blobs.delete(hash('abcd', 1))
  expect(existsSync(precious)).toBe(true)
})

test('directories named like blobs, misplaced and mis-named files are not blobs: check and sweep go past them', async () => {
  const { data, deps } = await dataDir()
  const blobs = join(data, 'blobs')
  mkdirSync(join(blobs, 'ef', '01', hash('ef01', 1)), { recursive: true }) // a directory: rm failed with EISDIR
  const misplaced = oldFile(join(blobs, '00', '00', hash('ffff', 1)), 'misplaced') // broke the listing's order
  const upper = oldFile(join(blobs, 'AB', 'CD', hash('ABCD', 1)), 'upper case')
  const long = oldFile(join(blobs, '12', '34', hash('1234', 1) + '0'), 'too long')
  const real = oldFile(join(blobs, '12', '34', hash('1234', 2)), 'an orphan')

  const checked = await checkBlobs(deps, { now: new Date(), listed: 10 })
  expect(checked.stored).toEqual({ count: 1, bytes: 'an orphan'.length })
  const swept = await sweepBlobs(deps, { now: new Date(), olderThanMs: 0, dryRun: false })
  expect(swept.removed.count).toBe(1)
  expect(existsSync(real)).toBe(false)
  for (const path of [misplaced, upper, long, join(blobs, 'ef', '01', hash('ef01', 1))]) expect(existsSync(path)).toBe(true)
})

test.skipIf(process.getuid?.() === 0)('an unreadable directory fails the check rather than reporting its blobs missing', async () => {
  const { data, deps } = await dataDir()
  oldFile(join(data, 'blobs', '12', '34', hash('1234', 2)), 'an orphan')
  chmodSync(join(data, 'blobs', '12'), 0)
  try {
    await expect(checkBlobs(deps, { now: new Date(), listed: 10 })).rejects.toThrow(/EACCES|permission/)
  } finally {
    chmodSync(join(data, 'blobs', '12'), 0o700)
  }
})
