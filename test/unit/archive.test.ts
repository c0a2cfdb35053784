import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_ARCHIVE_LIMITS } from '../../src/archive/entries'
import { inspectArchive } from '../../src/archive/inspect'
import { makeTarGz, makeZip, samplePack } from '../support/archives'

const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-archive-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
async function inspect(bytes: Uint8Array, limits = DEFAULT_ARCHIVE_LIMITS) {
  const path = join(dir, `a${n++}`)
  await Bun.write(path, bytes)
  return inspectArchive(path, limits)
}

describe('inspectArchive', () => {
  test('a zip (deflated or stored) is valid and its host nodes are extracted', async () => {
    for (const deflate of [true, false]) {
      expect(await inspect(makeZip(samplePack(), { deflate }))).toEqual({
        ok: true,
        format: 'zip',
        hostNodes: ['ImageBlur', 'ImageSharpen'],
      })
    }
  })

  test('a tar.gz is valid too', async () => {
    expect(await inspect(makeTarGz(samplePack()))).toEqual({ ok: true, format: 'tar.gz', hostNodes: ['ImageBlur', 'ImageSharpen'] })
  })

  test.each([
    ['../evil', 'unsafe path'],
    ['a/../../evil', 'unsafe path'],
    ['/etc/passwd', 'unsafe path'],
    ['C:/windows/evil', 'unsafe path'],
    ['..\\evil', 'unsafe path'],
  ])('refuses a zip entry named %p', async (name, reason) => {
    const result = await inspect(makeZip([...samplePack(), { name, data: 'x' }]))
    expect(result.ok).toBe(false)
    expect(!result.ok && result.reason).toContain(reason)
  })

  test('refuses traversal in a tar.gz and links in both formats', async () => {
    const tar = await inspect(makeTarGz([{ name: '../evil', data: 'x' }]))
    expect(!tar.ok && tar.reason).toContain('unsafe path')
    const zipLink = await inspect(makeZip([{ name: 'link', data: '/etc/passwd', mode: 0o120777 }]))
    expect(!zipLink.ok && zipLink.reason).toContain('link')
    const tarLink = await inspect(makeTarGz([{ name: 'link', data: '', mode: 0o120777 }]))
    expect(!tarLink.ok && tarLink.reason).toContain('link')
  })

  test('enforces the entry-count and total-size limits', async () => {
    const files = Array.from({ length: 6 }, (_, i) => ({ name: `f${i}.txt`, data: 'x'.repeat(100) }))
    const fewEntries = { ...DEFAULT_ARCHIVE_LIMITS, maxEntries: 5 }
    expect(await inspect(makeZip(files), fewEntries)).toMatchObject({ ok: false, reason: 'archive has 6 entries; the limit is 5' })
    expect((await inspect(makeTarGz(files), fewEntries)).ok).toBe(false)
    const small = { ...DEFAULT_ARCHIVE_LIMITS, maxTotalBytes: 500 }
    expect(await inspect(makeZip(files), small)).toMatchObject({ ok: false, reason: 'archive expands beyond 500 bytes' })
    expect(await inspect(makeTarGz(files), small)).toMatchObject({ ok: false })
  })

  test('refuses bytes that are not an archive, a truncated zip and an empty one', async () => {
    expect(await inspect(new TextEncoder().encode('just text'))).toMatchObject({ ok: false, reason: 'not a zip or tar.gz archive' })
    const zip = makeZip(samplePack())
    expect((await inspect(zip.subarray(0, zip.length - 30))).ok).toBe(false)
    expect(await inspect(makeZip([]))).toMatchObject({ ok: false, reason: 'archive is empty' })
    expect((await inspect(new Uint8Array([0x1f, 0x8b, 1, 2, 3]))).ok).toBe(false)
  })
})
