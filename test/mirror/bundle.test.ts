/** export / import: one file across an air gap, checked before anything is visible, applied in order, idempotent. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createReadStream, createWriteStream, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { exportBundle, importBundle } from '../../src/services/mirror/bundle'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, storedBlobs, type TestApp } from '../support/app'
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

  test('a bundle cut short is refused', async () => {
    await publishActive(origin, { pat, node: 'pack', version: '1.0.0' })
    const { file } = await exportTo()
    const bytes = readFileSync(file)
    writeFileSync(file, bytes.subarray(0, bytes.length >> 1))
    await expect(importFrom(file)).rejects.toThrow()
    expect((await airgap.call('GET', '/nodes')).body.total).toBe(0)
  })
})
