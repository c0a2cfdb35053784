/**
 * An export whose database goes away mid-way says so (exit 1, one line naming the database, not the file): it said
 * "cannot write FILE: Connection closed", which sends an operator to look at a disk that is fine. Nothing is left
 * at FILE or beside it. The database is reached through a proxy that drops the connection at the export's first
 * read of the change feed.
 */
import { afterEach, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../../src/cli'
import { openStore, type Store } from '../../src/store/db'
import { aliceWithPublisher, makeTestApp, publish, type TestApp } from '../support/app'
import { describeOnBackends, testSchema } from '../support/backends'
import { proxyUrl } from '../support/tcp-proxy'
import { capturedIo } from '../support/cli'

let t: TestApp | undefined
const closers: (() => Promise<void> | void)[] = []
afterEach(async () => {
  await t?.cleanup()
  for (const close of closers.splice(0)) await close()
})

describeOnBackends('an export whose database goes away', () => {
  test('says the database went, not that the file could not be written', async () => {
    const schema = await testSchema()
    const db: Store = await openStore(schema.url, { poolSize: 2 })
    const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-export-lost-'))
    closers.push(
      schema.drop,
      () => db.destroy(),
      () => rmSync(dir, { recursive: true, force: true }),
    )
    t = await makeTestApp({ store: db })
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const { proxy, url } = proxyUrl(schema.url, { watch: (m) => (/"changes"/.test(m) ? 'cut' : undefined) })
    closers.push(proxy.stop)

    const { err, io } = capturedIo()
    const file = join(dir, 'out.tar')
    const code = await runCli(['export', '--database', url, '--data', join(dir, 'data'), file], io)
    expect({ code, err }).toEqual({ code: 1, err: [expect.stringMatching(/^the database went away during the export/)] })
    expect(err[0]).not.toContain(file)
    expect(existsSync(file) || existsSync(`${file}.partial`)).toBe(false)
  }, 20_000)
})
