import { afterEach, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createBlobCache } from '../../src/blobs/disk-cache'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('blob-cache')
afterEach(() => dirs.cleanup())

const sha = (n: number) => String(n).padStart(64, '0')
const filler = (bytes: number, calls: string[]) => async (path: string) => {
  calls.push(path)
  await Bun.write(path, new Uint8Array(bytes).fill(7))
}

describe('the local copy of object storage blobs', () => {
  test('fills once however many ask at once, then answers from disk as a file with its size', async () => {
    const cache = createBlobCache(dirs.make(), 1000)
    const calls: string[] = []
    const blobs = await Promise.all([1, 2, 3].map(() => cache.get(sha(1), filler(100, calls))))
    expect(calls).toHaveLength(1)
    expect(blobs.map((b) => b.size)).toEqual([100, 100, 100])
    await cache.get(sha(1), filler(100, calls))
    expect(calls).toHaveLength(1)
  })

  test('keeps at most its size in bytes, least recently used out first; a new cache finds what the last one kept', async () => {
    const dir = dirs.make()
    const cache = createBlobCache(dir, 250)
    const calls: string[] = []
    await cache.get(sha(1), filler(100, calls))
    await cache.get(sha(2), filler(100, calls))
    await cache.get(sha(1), filler(100, calls)) // 1 is now newer than 2
    await cache.get(sha(3), filler(100, calls))
    expect(readdirSync(dir).sort()).toEqual([sha(1), sha(3)])
    expect(calls).toHaveLength(3)
    const again = createBlobCache(dir, 250)
    await again.get(sha(3), filler(100, calls))
    expect(calls).toHaveLength(3)
  })

  test('a blob larger than the whole cache is kept until the next fill, so that it can be sent', async () => {
    const dir = dirs.make()
    const cache = createBlobCache(dir, 250)
    const calls: string[] = []
    await cache.get(sha(1), filler(100, calls))
    const large = await cache.get(sha(2), filler(1000, calls))
    expect(await large.bytes()).toEqual(new Uint8Array(1000).fill(7))
    expect(readdirSync(dir)).toEqual([sha(2)])
    await cache.get(sha(3), filler(100, calls))
    expect(readdirSync(dir)).toEqual([sha(3)])
  })

  test('a fill that fails leaves nothing behind and is tried again next time', async () => {
    const dir = dirs.make()
    const cache = createBlobCache(dir, 1000)
    await expect(
      cache.get(sha(1), async (path) => {
        await Bun.write(path, 'half')
        throw new Error('cut off')
      }),
    ).rejects.toThrow('cut off')
    expect(readdirSync(dir)).toEqual([])
    const calls: string[] = []
    expect((await cache.get(sha(1), filler(10, calls))).size).toBe(10)
    expect(readdirSync(join(dir))).toEqual([sha(1)])
  })
})
