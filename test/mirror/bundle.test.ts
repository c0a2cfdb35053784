/** export / import: one file across an air gap, checked before anything is visible, applied in order, idempotent. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createReadStream, createWriteStream, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { importLine } from '../../src/bundle-commands'
import { exportBundle, importBundle } from '../../src/services/mirror/bundle'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, storedBlobs, type TestApp } from '../support/app'
import { bundleMembers, readBundle, sha256, writeBundle } from '../support/bundle-tar'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('bundle')
let origin: TestApp
let airgap: TestApp
let pat: string
beforeEach(async () => {
  origin = await makeTestApp()
  airgap = await makeTestApp()
  pat = (await aliceWithPublisher(origin)).pat
})
afterEach(async () => {
  await origin.cleanup()
  await airgap.cleanup()
  dirs.cleanup()
})

async function exportTo(since = 0) {
  const file = join(dirs.make(), 'bundle.tar')
  const result = await exportBundle(origin.deps, since, createWriteStream(file))
  return { file, ...result }
}
const importFrom = (file: string) => importBundle(airgap.deps, () => createReadStream(file))
const blobFiles = (t: TestApp) => [...new Bun.Glob('**/*').scanSync({ cwd: t.dir, onlyFiles: true })].filter((f) => !f.startsWith('tmp/'))

describe('bundles', () => {
  test('a snapshot carries everything with its archives; importing it again changes nothing', async () => {
    const zip = makeZip(samplePack([{ name: 'w.bin', data: crypto.getRandomValues(new Uint8Array(30_000)) }]))
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0', bytes: zip })
    await publishActive(origin, { pat, node: 'pack', version: '1.1.0' })
    await publishActive(origin, { pat, node: 'other', version: '0.1.0' })
    const { file, manifest, missingArchives } = await exportTo()
    expect(manifest.since).toBe(0)
    expect(manifest.archives).toHaveLength(2) // 1.1.0 and 0.1.0 share the sample archive's bytes
    expect(missingArchives).toBe(0)
    const first = await importFrom(file)
    expect(first).toMatchObject({ complete: true, problems: [], changed: { publishers: 1, nodes: 2, versions: 3 } })
    // Users are not mirrored, so publishers show no members on the other side; everything else is the same.
    const noMembers = (body: unknown) => JSON.parse(JSON.stringify(body).replace(/"members":\[[^\]]*\]/g, '"members":[]'))
    for (const path of ['/nodes/pack', '/nodes/other', '/nodes/pack/versions', '/nodes/search?search=pack']) {
      expect((await airgap.call('GET', path)).body).toEqual(noMembers((await origin.call('GET', path)).body))
    }
    const bytes = await airgap.app.request('/archives/acme/pack/1.0.0/node.zip')
    expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(zip)
    const again = await importFrom(file)
    expect(again.changed).toEqual({ publishers: 0, nodes: 0, versions: 0, removed: 0 })
    // Imported entities are mirrored: read-only here.
    expect((await airgap.call('POST', '/nodes/pack/reviews?star=5')).body.error).toBe('mirrored_read_only')
  })

  test('--since carries only the changes after a serial; a bundle that leaves a gap is refused', async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0' })
    const full = await exportTo()
    await publishActive(origin, { pat, node: 'pack', version: '2.0.0' })
    const second = await exportTo(full.manifest.until)
    await publishActive(origin, { pat, node: 'pack', version: '3.0.0' })
    const third = await exportTo(second.manifest.until)
    expect(second.manifest.rows.reduce((n, r) => n + r.changes, 0)).toBe(2) // the node and its new version
    await importFrom(full.file)
    await expect(importFrom(third.file)).rejects.toThrow(
      `this bundle holds the changes after serial ${second.manifest.until} of registry ${full.manifest.instance}, but this registry has imported only up to serial ${full.manifest.until} from it: export again with --since ${full.manifest.until}`,
    )
    expect((await airgap.call('GET', '/nodes/pack')).body.latest_version.version).toBe('1.0.0')
    await importFrom(second.file)
    await importFrom(third.file)
    expect((await airgap.call('GET', '/nodes/pack')).body.latest_version.version).toBe('3.0.0')
    expect((await airgap.call('GET', '/nodes/pack/versions')).body.map((v: any) => v.version)).toEqual(['3.0.0', '2.0.0', '1.0.0'])
  })

  test('a damaged bundle is refused before anything becomes visible', async () => {
    const zip = makeZip(samplePack([{ name: 'w.bin', data: crypto.getRandomValues(new Uint8Array(30_000)) }]))
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0', bytes: zip })
    const { file } = await exportTo()
    const bytes = readFileSync(file)
    const at = bytes.indexOf(Buffer.from(zip.subarray(1000, 1032)))
    bytes[at] = bytes[at]! ^ 0xff
    writeFileSync(file, bytes)
    await expect(importFrom(file)).rejects.toThrow(/^archives\/[0-9a-f]{64}: its bytes have SHA-256 [0-9a-f]{64}; the bundle is damaged$/)
    expect((await airgap.call('GET', '/nodes')).body.total).toBe(0)
    expect(blobFiles(airgap)).toEqual([])
    expect(await storedBlobs(airgap)).toEqual([])
    expect([...new Bun.Glob('tmp/*').scanSync({ cwd: airgap.dir })]).toEqual([])
  })

  test("a file that cannot be written fails the export with the file system's own error, not the tar writer's", async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0' })
    await publishActive(origin, { pat, node: 'pack', version: '1.1.0' })
    // A disk that is full (or a path refused) from the first byte: the error reaches the tar writer mid-export.
    const full = new Writable({
      write: (_chunk, _enc, done) => done(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })),
    })
    const failure = await exportBundle(origin.deps, 0, full).then(
      () => undefined,
      (err: Error & { code?: string }) => err,
    )
    expect({ message: failure?.message, code: failure?.code }).toEqual({ message: 'ENOSPC: no space left on device', code: 'ENOSPC' })
  })

  test('a bundle cut short is refused', async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0' })
    const { file } = await exportTo()
    const bytes = readFileSync(file)
    writeFileSync(file, bytes.subarray(0, bytes.length >> 1))
    await expect(importFrom(file)).rejects.toThrow()
    expect((await airgap.call('GET', '/nodes')).body.total).toBe(0)
  })

  test('an archive the archive check refuses is not stored: its version comes without it, reported as a sync reports it', async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0' })
    const parts = await readBundle((await exportTo()).file)
    const cases = {
      slip: {
        bytes: makeZip([...samplePack(), { name: '../../x.py', data: 'print(1)' }]),
        reason: /^invalid archive: .*"\.\.\/\.\.\/x\.py" has an unsafe path$/,
      },
      bytes: {
        bytes: new TextEncoder().encode('#!/bin/sh\necho no zip\n'.repeat(10)),
        reason: /^invalid archive: not a zip or tar\.gz archive$/,
      },
    }
    for (const { bytes, reason } of Object.values(cases)) {
      const sha = sha256(bytes)
      const rows = parts.rows.map((chunk) => chunk.map((r) => (r.archive ? { ...r, archive: { sha256: sha, size: bytes.byteLength } } : r)))
      const file = writeBundle(join(dirs.make(), 'b.tar'), bundleMembers({ ...parts, rows, archives: new Map([[sha, bytes]]) }))
      const result = await importFrom(file)
      expect(result.archives).toMatchObject({ fetched: 0, refused: 1 })
      expect(result.problems).toEqual([{ kind: 'archive', id: 'pack@1.0.0', reason: expect.stringMatching(reason) }])
      expect((await airgap.call('GET', '/nodes/pack')).body.latest_version.version).toBe('1.0.0')
      expect((await airgap.app.request('/archives/acme/pack/1.0.0/node.zip')).status).toBe(404)
      expect(await storedBlobs(airgap)).toEqual([])
      expect([...new Bun.Glob('tmp/*').scanSync({ cwd: airgap.dir })]).toEqual([])
    }
  })

  test('a bad bundle is refused in one line before any row applies: nothing changes, no source is left, no file is staged', async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0' })
    await publishActive(origin, { pat, node: 'other', version: '0.1.0' })
    const { file: honest } = await exportTo()
    const parts = await readBundle(honest)
    // Two chunks, as a larger export has: a fault in the second must not leave the first applied.
    const all = parts.rows[0]!
    const split = { ...parts, rows: [all.slice(0, 3), all.slice(3)] }
    const serials = all.map((r) => r.serial as number)
    const [archiveSha, archiveBytes] = [...parts.archives][0]!
    const at = (chunk: number, i: number, change: Record<string, unknown>) =>
      split.rows.map((c, n) => (n === chunk ? c.map((r, j) => (j === i ? { ...r, ...change } : r)) : c))
    const bytes = readFileSync(honest)
    const cases: [what: string, members: () => Uint8Array | ReturnType<typeof bundleMembers>, message: RegExp][] = [
      [
        'second chunk not JSON',
        () => bundleMembers(split, { raw: { 1: 'not json\n' } }),
        /^rows\/000001\.ndjson, line 1: not JSON \(.+\); the bundle is damaged$/,
      ],
      [
        'a serial that is no number',
        () => bundleMembers({ ...split, rows: at(1, 0, { serial: 'x' }) }),
        /^rows\/000001\.ndjson, entry 1: serial: .+; the bundle is damaged$/,
      ],
      [
        'serials out of order',
        () => bundleMembers({ ...split, rows: at(1, 1, { serial: serials[0] }) }),
        new RegExp(`^rows/000001\\.ndjson: the serials are out of order at ${serials[0]}; the bundle is damaged$`),
      ],
      [
        'until past the rows',
        () => bundleMembers(split, { manifest: { until: 2 ** 53 - 1 } }),
        /^the manifest says the rows end at serial 9007199254740991, but they end at \d+; the bundle is damaged$/,
      ],
      [
        'until before the rows',
        () => bundleMembers(split, { manifest: { until: 1 } }),
        /^the manifest says the rows end at serial 1, but they end at \d+; the bundle is damaged$/,
      ],
      [
        'a rows chunk twice',
        () => bundleMembers(split, { extra: [{ name: 'rows/000000.ndjson', data: '' }] }),
        /^the bundle holds "rows\/000000\.ndjson" twice; the bundle is damaged$/,
      ],
      [
        'an archive twice',
        () => bundleMembers(split, { extra: [{ name: `archives/${archiveSha}`, data: archiveBytes }] }),
        /^the bundle holds "archives\/[0-9a-f]{64}" twice; the bundle is damaged$/,
      ],
      [
        'a header declaring 4 GiB',
        () => bundleMembers(split, { extra: [{ name: `archives/${'c'.repeat(64)}`, data: 'x'.repeat(4096), declaredSize: 2 ** 32 }] }),
        /^archives\/c{64}: 4294967296 bytes, more than the upload limit \(\d+ bytes\)$/,
      ],
      [
        'cut short',
        () => bytes.subarray(0, bytes.indexOf(Buffer.from(archiveBytes.subarray(0, 64))) + 100),
        /^not a registry-mirror bundle: it is cut short/,
      ],
    ]
    for (const [what, members, message] of cases) {
      const made = members()
      const file = join(dirs.make(), 'b.tar')
      if (made instanceof Uint8Array) writeFileSync(file, made)
      else writeBundle(file, made)
      const error = await importFrom(file).then(
        () => undefined,
        (err: Error) => err,
      )
      expect({ what, name: error?.constructor.name, message: error?.message }).toEqual({
        what,
        name: 'BundleError',
        message: expect.stringMatching(message),
      })
      expect({ what, nodes: (await airgap.call('GET', '/nodes')).body.total }).toEqual({ what, nodes: 0 })
      expect({ what, sources: await airgap.deps.db.selectFrom('mirror_sources').select('id').execute() }).toEqual({ what, sources: [] })
      expect({ what, staged: [...new Bun.Glob('tmp/*').scanSync({ cwd: airgap.dir })], stored: await storedBlobs(airgap) }).toEqual({
        what,
        staged: [],
        stored: [],
      })
    }
    // The honest bundle split in two applies as one.
    expect((await importFrom(writeBundle(join(dirs.make(), 'b.tar'), bundleMembers(split)))).changed).toMatchObject({
      nodes: 2,
      versions: 2,
    })
  })

  test('a stop signal ends an import at once, nothing applied and nothing staged; endless input is refused', async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0' })
    const bytes = readFileSync((await exportTo()).file)
    const stop = new AbortController()
    // The first part of the bundle (into its archive), then nothing more: the stop comes while the import waits.
    const stalled = () =>
      Readable.from(
        (async function* () {
          yield bytes.subarray(0, 3000)
          stop.abort()
          await new Promise(() => {})
        })(),
      )
    await expect(importBundle(airgap.deps, stalled, { signal: stop.signal })).rejects.toThrow(
      'the import was stopped before anything was applied',
    )
    expect((await airgap.call('GET', '/nodes')).body.total).toBe(0)
    expect([...new Bun.Glob('tmp/*').scanSync({ cwd: airgap.dir })]).toEqual([])
    // Blocks of zeros are "no header" to a tar reader, for ever (/dev/zero).
    const zeros = () =>
      Readable.from(
        (function* () {
          for (;;) yield new Uint8Array(64 * 1024)
        })(),
      )
    await expect(importBundle(airgap.deps, zeros)).rejects.toThrow(
      /^not a registry-mirror bundle: more than \d+ bytes are outside its members$/,
    )
  })
})

/**
 * An import's summary tells the archives it stored from those already here: a second import of the same bundle said
 * "1 archive" as if it had stored it again. Bytes carried that a version here already has are "already here", even
 * when the version taking them is new.
 */
describe("an import's summary", () => {
  const importedLine = async (file: string) => importLine(await importFrom(file))
  const zip = (name: string) => makeZip(samplePack([{ name: `${name}.py`, data: `# ${name}\n` }]))

  test('the same bundle imported twice: stored the first time, already here the second', async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0', bytes: zip('one') })
    await publishActive(origin, { pat, node: 'pack', version: '1.1.0', bytes: zip('two') })
    const { file } = await exportTo()
    expect(await importedLine(file)).toContain('2 versions changed, 0 removed; 2 archives (2 stored); 0 problems')
    expect(await importedLine(file)).toContain('0 versions changed, 0 removed; 2 archives (0 stored, 2 already here); 0 problems')
  })

  test('a later bundle whose new version carries bytes already here: counted as already here', async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0', bytes: zip('same') })
    const first = await exportTo()
    expect(await importedLine(first.file)).toContain('; 1 archive (1 stored);')
    await publishActive(origin, { pat, node: 'pack', version: '1.1.0', bytes: zip('same') })
    await publishActive(origin, { pat, node: 'pack', version: '1.2.0', bytes: zip('new') })
    const later = await exportTo(first.manifest.until)
    expect(await importedLine(later.file)).toContain('; 2 archives (1 stored, 1 already here);')
  })
})
