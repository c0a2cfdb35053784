/**
 * Two processes' blob caches on one directory (a command started beside serve, or a second serve on one data
 * directory): a cache's start removes the partial copies a killed process left, and only those. It removed every
 * partial copy it found, the ones another live process was still filling too, whose download then failed (the fill's
 * rename found no file). A partial copy is named after its process (blobs/owner.ts): one whose process has ended is
 * removed at once, any other once nothing was written to it for an hour.
 */
import { afterEach, expect, test } from 'bun:test'
import { closeSync, openSync, readdirSync, utimesSync, writeFileSync, writeSync } from 'node:fs'
import { basename, join } from 'node:path'
import { createBlobCache } from '../../src/blobs/disk-cache'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('blob-cache-parts')
afterEach(() => dirs.cleanup())

const sha = (n: number) => String(n).padStart(64, '0')
const bytes = (n: number) => new Uint8Array(100).fill(n)

/** A pid no process has now: one that just ran and was waited for. */
function endedPid(): number {
  const child = Bun.spawnSync(['true'])
  expect(child.exitCode).toBe(0)
  return child.pid
}

test("a cache started on the directory leaves another live cache's copy under way, which completes", async () => {
  const dir = dirs.make()
  const serving = createBlobCache(dir, 10_000)
  let partial!: string
  const { promise: writing, resolve: started } = Promise.withResolvers<void>()
  const { promise: finished, resolve: finish } = Promise.withResolvers<void>()
  // Written through one open file as a download writes it: a file removed meanwhile takes the bytes, then is gone.
  const copy = serving.get(sha(1), async (path) => {
    partial = path
    const file = openSync(path, 'w')
    writeSync(file, bytes(1).subarray(0, 40))
    started()
    await finished
    writeSync(file, bytes(1).subarray(40))
    closeSync(file)
  })
  await writing
  createBlobCache(dir, 10_000)
  // A start that removes files without waiting for the removals (as it did) has done so by now.
  await Bun.sleep(50)
  expect(readdirSync(dir)).toContain(basename(partial))
  finish()
  expect(await (await copy).bytes()).toEqual(bytes(1))
})

test("a cache's start removes the partial copies of ended processes and old unnamed ones, and keeps recent ones", async () => {
  const dir = dirs.make()
  const hourAgo = new Date(Date.now() - 61 * 60_000)
  const files = {
    ended: `${endedPid()}-pdeadbeef-copy.part`,
    thisPidKilledBefore: `${process.pid}-p0badcafe-copy.part`,
    oldUnnamed: 'copy-of-an-older-release.part',
    recentUnnamed: 'copy-of-another-release.part',
    thisPidOlderRelease: `${process.pid}-x.part`,
  }
  for (const name of Object.values(files)) writeFileSync(join(dir, name), 'partial')
  utimesSync(join(dir, files.oldUnnamed), hourAgo, hourAgo)
  writeFileSync(join(dir, sha(2)), bytes(2))
  createBlobCache(dir, 10_000)
  expect(readdirSync(dir).sort()).toEqual([sha(2), files.thisPidOlderRelease, files.recentUnnamed].sort())
})
