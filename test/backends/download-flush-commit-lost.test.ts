/**
 * A download-count flush whose COMMIT reached PostgreSQL but whose answer never came back (the server stopped, the
 * connection dropped right after committing) must not be written again: the counts would be added twice. A proxy
 * in front of the database lets the COMMIT through and then drops the connection instead of passing the answer on.
 */
import { afterEach, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { createDownloadCounter } from '../../src/services/downloads'
import { openStore, type Store } from '../../src/store/db'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { describeOnBackends, testSchema } from '../support/backends'
import { proxyUrl } from '../support/tcp-proxy'

let t: TestApp | undefined
const closers: (() => Promise<void> | void)[] = []
afterEach(async () => {
  await t?.cleanup()
  for (const close of closers.splice(0)) await close()
})

describeOnBackends('a download-count flush whose commit answer is lost', () => {
  test('is not written again: the counts are never doubled', async () => {
    const schema = await testSchema()
    const direct = new SQL(schema.url)
    let armed = false
    const { proxy, url } = proxyUrl(schema.url, {
      watch: (message) => (armed && /commit/i.test(message) ? ((armed = false), 'lose-answer') : undefined),
    })
    const db: Store = await openStore(url, { poolSize: 2 })
    closers.push(
      schema.drop,
      () => direct.close(),
      () => db.destroy(),
      proxy.stop,
    )
    t = await makeTestApp({ store: db })
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const counter = createDownloadCounter(t.deps)
    for (let i = 0; i < 5; i++) counter.count('pack')

    armed = true
    await counter.flush()
    expect(proxy.answersLost()).toBe(1) // the commit's answer was dropped
    await counter.flush() // the next second's flush
    await counter.flush()
    const [row] = await direct`select downloads from node_downloads where node_id = 'pack'`
    expect(Number(row.downloads)).toBe(5)
    expect(t.logs.some((l) => l.includes('downloads.flush_outcome_unknown'))).toBe(true)
  }, 20_000)
})
