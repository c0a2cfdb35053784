/**
 * A writer that cannot record its blob intent (the database went just then) discards the bytes it staged: a fixture
 * load and an import left them in tmp/ until the staging sweep found them.
 */
import { afterEach, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { loadFixture } from '../../src/services/fixture'
import { makeZip, samplePack } from '../support/archives'
import { makeTestApp, type TestApp } from '../support/app'

let t: TestApp
afterEach(() => t.cleanup())

/** Every insert of an intent fails, as it does with the database gone between the staging and the intent. */
async function intentsRefused(app: TestApp) {
  await app.deps.db.schema.dropTable('blob_intents').execute()
}

const staging = (app: TestApp) => readdirSync(join(app.dir, 'tmp'))

test('a fixture load whose intent fails discards its staged archives', async () => {
  t = await makeTestApp({ local: true })
  const fixture = {
    publishers: [{ id: 'acme', name: 'Acme' }],
    nodes: [
      {
        id: 'acme-node',
        publisher: 'acme',
        name: 'Acme node',
        versions: [{ version: '1.0.0', archive_base64: Buffer.from(makeZip(samplePack())).toString('base64') }],
      },
    ],
  }
  await intentsRefused(t)
  await expect(loadFixture(t.deps, JSON.stringify(fixture))).rejects.toThrow()
  expect(staging(t)).toEqual([])
})
