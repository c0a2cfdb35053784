import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('blobs')
const tmp = dirs.make
afterEach(dirs.cleanup)

describe('createDiskBlobStore', () => {
  test('stores content-addressed bytes and finds them again', async () => {
    const blobs = createDiskBlobStore(tmp())
    const stored = await blobs.put(new Blob(['hello']).stream(), 100)
    expect(stored.sha256).toBe(new Bun.CryptoHasher('sha256').update('hello').digest('hex'))
    expect(await Bun.file((await blobs.locate(stored.sha256))!).text()).toBe('hello')
    expect(await blobs.locate('0'.repeat(64))).toBeUndefined()
    expect(await blobs.locate('../../etc/passwd')).toBeUndefined()
  })

  test('refuses bytes past the limit and leaves nothing behind', async () => {
    const dir = tmp()
    const blobs = createDiskBlobStore(dir)
    await expect(blobs.put(new Blob(['x'.repeat(101)]).stream(), 100)).rejects.toMatchObject({ status: 413 })
    expect([...new Bun.Glob('**/*').scanSync(dir)]).toEqual([])
  })

  test('sweeps upload leftovers older than an hour when it opens', () => {
    const dir = tmp()
    mkdirSync(join(dir, 'tmp'))
    const stale = join(dir, 'tmp', 'old.part')
    const fresh = join(dir, 'tmp', 'new.part')
    writeFileSync(stale, 'x')
    writeFileSync(fresh, 'x')
    const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000
    utimesSync(stale, twoHoursAgo, twoHoursAgo)
    createDiskBlobStore(dir)
    expect(existsSync(stale)).toBe(false)
    expect(existsSync(fresh)).toBe(true)
  })
})
