/** An import that cannot record its blob intent (the database went just then) discards the archives it staged. */
import { afterEach, expect, test } from 'bun:test'
import { createReadStream, createWriteStream, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { exportBundle, importBundle } from '../../src/services/mirror/bundle'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('bundle-intent')
const apps: TestApp[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.cleanup()
  dirs.cleanup()
})

test('an import whose intent fails leaves nothing staged in tmp/', async () => {
  const origin = await makeTestApp()
  const airgap = await makeTestApp()
  apps.push(origin, airgap)
  await publishActive(origin, { pat: (await aliceWithPublisher(origin)).pat, node: 'pack', version: '1.0.0' })
  const file = join(dirs.make(), 'bundle.tar')
  await exportBundle(origin.deps, 0, createWriteStream(file))
  // Every insert of an intent fails, as it does with the database gone between the staging and the intent.
  await airgap.deps.db.schema.dropTable('blob_intents').execute()
  await expect(importBundle(airgap.deps, () => createReadStream(file))).rejects.toThrow()
  expect(readdirSync(join(airgap.dir, 'tmp'))).toEqual([])
})
