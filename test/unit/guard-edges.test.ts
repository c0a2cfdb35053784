/**
 * Pure guards at their exact edges, each found untested by breaking it (a hand-made mutant survived the suite):
 * the free-form object's size, an expiry too large to be a safe integer, ranges the server must clamp or ignore, an
 * archive's expanded size, and the rate limiter's window.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_ARCHIVE_LIMITS } from '../../src/archive/entries'
import { inspectArchive } from '../../src/archive/inspect'
import { readSignedQuery } from '../../src/blobs/signing'
import { MAX_OBJECT_JSON, objectProblem } from '../../src/domain/json-bounds'
import { parseRange } from '../../src/http/archives'
import { createRateLimiter } from '../../src/services/rate-limit'
import { makeTarGz, makeZip } from '../support/archives'

/** An object whose JSON is exactly `length` characters: {"text":"xxx…"} */
const ofJsonLength = (length: number) => ({ text: 'x'.repeat(length - '{"text":""}'.length) })

describe('free-form objects', () => {
  test('take exactly MAX_OBJECT_JSON characters of JSON, and refuse one more', () => {
    expect(JSON.stringify(ofJsonLength(MAX_OBJECT_JSON)).length).toBe(MAX_OBJECT_JSON)
    expect(objectProblem(ofJsonLength(MAX_OBJECT_JSON))).toBeUndefined()
    expect(objectProblem(ofJsonLength(MAX_OBJECT_JSON + 1))).toBe(`is larger than ${MAX_OBJECT_JSON} characters of JSON`)
  })
})

describe('signed query expiry', () => {
  test('16 digits past the largest safe integer read as no expiry', () => {
    expect(readSignedQuery('expires=9007199254740991&signature=ab').expires).toBe(Number.MAX_SAFE_INTEGER)
    expect(readSignedQuery('expires=9999999999999999&signature=ab').expires).toBeUndefined()
  })
})

describe('parseRange at its edges', () => {
  test('a suffix longer than the file is the whole file', () => {
    expect(parseRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 })
  })

  test('"bytes=-" names no range: the whole file, not an unsatisfiable one', () => {
    expect(parseRange('bytes=-', 100)).toBeUndefined()
  })
})

describe("an archive's expanded size", () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-guard-edges-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const files = [
    { name: 'a.txt', data: 'x'.repeat(300) },
    { name: 'b.txt', data: 'y'.repeat(200) },
  ]
  const inspect = async (name: string, bytes: Uint8Array, maxTotalBytes: number) => {
    await Bun.write(join(dir, name), bytes)
    return inspectArchive(join(dir, name), { ...DEFAULT_ARCHIVE_LIMITS, maxTotalBytes })
  }

  test.each([
    ['zip', makeZip(files)],
    ['tar.gz', makeTarGz(files)],
  ])('a %s of exactly the limit is valid; one byte over is not', async (format, bytes) => {
    expect((await inspect(`${format}-at`, bytes, 500)).ok).toBe(true)
    expect(await inspect(`${format}-over`, bytes, 499)).toMatchObject({ ok: false, reason: 'archive expands beyond 499 bytes' })
  })
})

describe('the rate limiter', () => {
  test('admits `limit` events in a window; the next window starts exactly `windowMs` after the first', () => {
    const admit = createRateLimiter(2, 1000)
    expect([admit('k', 0), admit('k', 1)]).toEqual([0, 0])
    expect(admit('k', 2)).toBe(998)
    expect(admit('k', 999)).toBe(1)
    expect(admit('other', 999)).toBe(0)
    expect(admit('k', 1000)).toBe(0)
  })
})
