/**
 * An import whose database goes away mid-way ends in one line saying so (exit 1), as a sync does, not in an
 * uncaught error with Bun's dump of the PostgreSQL error; run again once the database is back, it completes.
 */
import { afterEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
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

const capture = () => capturedIo()

describeOnBackends('an import whose database goes away', () => {
  test('says so in one line, and a second run completes', async () => {
    const source = await testSchema()
    const target = await testSchema()
    const db: Store = await openStore(source.url, { poolSize: 2 })
    await (await openStore(target.url, { poolSize: 1 })).destroy() // migrated: the import's opening reads no table
    const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-import-lost-'))
    closers.push(
      source.drop,
      target.drop,
      () => db.destroy(),
      () => rmSync(dir, { recursive: true, force: true }),
    )
    t = await makeTestApp({ store: db })
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'pack', version: '1.0.0' })
    const bundle = join(dir, 'bundle.tar')
    const exported = capture()
    expect(await runCli(['export', '--database', source.url, '--data', join(dir, 'a'), bundle], exported.io)).toBe(0)

    const { proxy, url } = proxyUrl(target.url, { watch: (m) => (/"nodes"/.test(m) ? 'cut' : undefined) })
    closers.push(proxy.stop)
    const cut = capture()
    expect(await runCli(['import', bundle, '--database', url, '--data', join(dir, 'b')], cut.io)).toBe(1)
    expect(cut.err).toEqual([expect.stringMatching(/^the database went away during the import: .+; run it again/)])

    const again = capture()
    expect(await runCli(['import', bundle, '--database', target.url, '--data', join(dir, 'b')], again.io)).toBe(0)
    expect(again.out.join('\n')).toContain('1 node')
  }, 20_000)
})
