/**
 * `copy-store` killed (SIGKILL) after its rows committed, while it refreshes the planner's statistics: the target
 * already holds the signing key (written with the rows), and a second run completes what was left instead of
 * refusing. The kill lands there every time: another session holds a lock that ANALYZE waits for and inserts do not.
 */
import { SQL } from 'bun'
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { runCli } from '../../src/cli'
import { openStore } from '../../src/store/db'
import { BIN, ensureBinary } from '../support/binary'
import { describeOnBackends, testSchema, unanalyzedTables } from '../support/backends'
import { tempDirs } from '../support/tmp'
import { capturedIo } from '../support/cli'

const dirs = tempDirs('copy-store-killed')
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
  dirs.cleanup()
})

const quietIo = capturedIo().io
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describeOnBackends('copy-store killed after its commit', () => {
  test('the target holds the signing key, and a second run finishes the copy', async () => {
    await ensureBinary()
    const dir = dirs.make()
    expect(await runCli(['users', 'create', '--id', 'alice', '--email', 'a@example.com', '--name', 'A', '--data', dir], quietIo)).toBe(0)
    await Bun.write(join(dir, 'signing.key'), 'the-old-key\n')
    const schema = await testSchema()
    closers.push(schema.drop)
    await (await openStore(schema.url)).destroy() // migrated, so that its tables can be locked

    // Inserts take ROW EXCLUSIVE, which this lock lets through; ANALYZE takes SHARE UPDATE EXCLUSIVE, which waits.
    const blocker = new SQL({ url: schema.url, max: 1 })
    closers.push(() => blocker.close())
    const held = await blocker.reserve()
    await held.unsafe('begin')
    await held.unsafe('lock table nodes in share update exclusive mode')

    const copy = Bun.spawn([BIN, 'copy-store', '--data', dir, '--database', schema.url], { stdout: 'pipe', stderr: 'pipe', env: {} })
    const target = new SQL({ url: schema.url, max: 1 })
    closers.push(() => target.close())
    for (let i = 0; i < 200; i++) {
      const [{ n }] = await target.unsafe('select count(*)::int as n from users')
      if (n > 0) break
      await sleep(50)
    }
    await sleep(200)
    expect(copy.exitCode).toBeNull() // committed, waiting for the statistics
    copy.kill('SIGKILL')
    await copy.exited
    await held.unsafe('rollback')
    held.release()

    expect(await target.unsafe(`select value from registry_secrets where name = 'url-signing'`)).toEqual([{ value: 'the-old-key' }])
    const again = Bun.spawnSync([BIN, 'copy-store', '--data', dir, '--database', schema.url], { env: {} })
    expect({ code: again.exitCode, err: again.stderr.toString() }).toEqual({ code: 0, err: '' })
    expect(again.stdout.toString()).toMatch(/already holds this registry .*an earlier copy-store completed/)
    const pg = await openStore(schema.url)
    closers.push(() => pg.destroy())
    expect(await unanalyzedTables(pg, ['nodes', 'node_versions', 'changes'])).toEqual([])
  }, 20_000)
})
