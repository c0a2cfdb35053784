/**
 * An import's summary tells the archives it stored from those already here: a second import of the same bundle said
 * "1 archive" as if it had stored it again. Bytes carried that a version here already has are "already here", even
 * when the version taking them is new; archives the check refuses are neither.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { createReadStream, createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { importLine } from '../../src/bundle-commands'
import { exportBundle, importBundle } from '../../src/services/mirror/bundle'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('bundle-summary')
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

async function exported(since = 0) {
  const file = join(dirs.make(), 'bundle.tar')
  const { manifest } = await exportBundle(origin.deps, since, createWriteStream(file))
  return { file, until: manifest.until }
}
const imported = async (file: string) => importLine(await importBundle(airgap.deps, () => createReadStream(file)))
const zip = (name: string) => makeZip(samplePack([{ name: `${name}.py`, data: `# ${name}\n` }]))

test('the same bundle imported twice: stored the first time, already here the second', async () => {
  await publishActive(origin, { pat, node: 'pack', version: '1.0.0', bytes: zip('one') })
  await publishActive(origin, { pat, node: 'pack', version: '1.1.0', bytes: zip('two') })
  const { file } = await exported()
  expect(await imported(file)).toContain('2 versions changed, 0 removed; 2 archives (2 stored); 0 problems')
  expect(await imported(file)).toContain('0 versions changed, 0 removed; 2 archives (0 stored, 2 already here); 0 problems')
})

test('a later bundle whose new version carries bytes already here: counted as already here', async () => {
  await publishActive(origin, { pat, node: 'pack', version: '1.0.0', bytes: zip('same') })
  const first = await exported()
  expect(await imported(first.file)).toContain('; 1 archive (1 stored);')
  await publishActive(origin, { pat, node: 'pack', version: '1.1.0', bytes: zip('same') })
  await publishActive(origin, { pat, node: 'pack', version: '1.2.0', bytes: zip('new') })
  const later = await exported(first.until)
  expect(await imported(later.file)).toContain('; 2 archives (1 stored, 1 already here);')
})
