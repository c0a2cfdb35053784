/**
 * The local copy of object storage in a data directory that another process uses too (a command beside serve, or a
 * second serve on one SQLite data directory): each process keeps its own account of the copies, and one's eviction
 * removes files the other counts as held. The other fetched nothing again: every download of such a blob was sent
 * from the missing file (a 500) until it restarted.
 */
import { afterEach, expect, test } from 'bun:test'
import { createBlobCache } from '../../src/blobs/disk-cache'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('blob-cache-shared')
afterEach(() => dirs.cleanup())

const sha = (n: number) => String(n).padStart(64, '0')
const fill = (n: number) => (path: string) => Bun.write(path, new Uint8Array(100).fill(n)).then(() => {})

test("a copy that another process's cache on the same directory evicted is fetched again", async () => {
  const dir = dirs.make()
  const serving = createBlobCache(dir, 250)
  await serving.get(sha(1), fill(1))
  // A command started beside it finds that copy, and evicts it for its own.
  const command = createBlobCache(dir, 250)
  await command.get(sha(2), fill(2))
  await command.get(sha(3), fill(3))
  const copy = await serving.get(sha(1), fill(1))
  expect(await copy.bytes()).toEqual(new Uint8Array(100).fill(1))
})
