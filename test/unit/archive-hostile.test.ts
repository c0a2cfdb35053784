import { afterAll, describe, expect, test } from 'bun:test'
import { closeSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { InspectionBudget } from '../../src/archive/budget'
import { DEFAULT_ARCHIVE_LIMITS } from '../../src/archive/entries'
import { inspectArchive } from '../../src/archive/inspect'
import { walkZip } from '../../src/archive/zip'
import { ZipFileReader } from '../../src/archive/zip-reader'
import { hostileCorpus, realisticPacks } from '../support/hostile-archives'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('hostile')
afterAll(() => dirs.cleanup())
const dir = dirs.make()
let n = 0
async function write(bytes: Uint8Array): Promise<string> {
  const path = join(dir, `a${n++}`)
  await Bun.write(path, bytes)
  return path
}

describe('the hostile corpus', () => {
  for (const c of hostileCorpus()) {
    test(`${c.format}: ${c.name}`, async () => {
      const result = await inspectArchive(await write(c.bytes()), { ...DEFAULT_ARCHIVE_LIMITS, ...c.limits })
      if ('reason' in c.expect) {
        expect(result.ok).toBe(false)
        expect(!result.ok && result.reason).toContain(c.expect.reason)
      } else {
        expect(result).toEqual({ ok: true, format: c.format as 'zip' | 'tar.gz', hostNodes: c.expect.hostNodes })
      }
    })
  }
})

describe('real-looking packs still pass', () => {
  for (const c of realisticPacks()) {
    test(c.name, async () => {
      const result = await inspectArchive(await write(c.bytes()), DEFAULT_ARCHIVE_LIMITS)
      expect(result).toEqual({ ok: true, format: c.format as 'zip' | 'tar.gz', hostNodes: (c.expect as { hostNodes: string[] }).hostNodes })
    })
  }
})

describe('zip reading is bounded by the file', () => {
  test('no zip of the corpus makes the reader read more than its size plus the end-record search', async () => {
    for (const c of hostileCorpus().filter((c) => c.format === 'zip')) {
      const bytes = c.bytes()
      const budget = new InspectionBudget(10_000, Number.MAX_SAFE_INTEGER)
      const visitor = { wants: () => true, visit: () => {} }
      await walkZip(await write(bytes), DEFAULT_ARCHIVE_LIMITS, visitor, budget).catch(() => {})
      expect({ case: c.name, bounded: budget.bytesRead <= bytes.byteLength + 128 * 1024 }).toEqual({ case: c.name, bounded: true })
    }
  })
})

describe('the zip file reader', () => {
  test('refuses, as a backstop, reads that add up to more than the file and its end-record search', async () => {
    const path = await write(new Uint8Array(100_000))
    const fd = openSync(path, 'r')
    const reader = new ZipFileReader(fd, 100_000, new InspectionBudget(10_000, Number.MAX_SAFE_INTEGER))
    for (let i = 0; i < 3; i++) expect((await reader.readExactly(0, 100_000)).byteLength).toBe(100_000)
    await expect(reader.readExactly(0, 100_000)).rejects.toThrow('zip archive structure makes its reader read more than the whole file')
    closeSync(fd)
  })
})
