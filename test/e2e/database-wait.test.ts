/**
 * `serve` started while its database does not answer (restarting, in crash recovery) waits for it, up to a minute,
 * and starts once it answers: it exited at once, and an instance a crash restarted during an outage stayed down
 * under a supervisor that gives up after a few quick failures. The database is reached through a TCP proxy that is
 * cut when the server starts and restored two seconds later.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { backendEnv, TEST_DATABASE } from '../support/backends'
import { ensureBinary, spawnServe } from '../support/binary'
import { proxyUrl } from '../support/tcp-proxy'

const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-dbwait-'))
beforeAll(ensureBinary)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// PostgreSQL only: an SQLite file has no server to wait for. CI's second pass (on PostgreSQL) runs it.
describe.skipIf(!TEST_DATABASE)('serve started while the database is away', () => {
  test('waits for it and starts once it answers', async () => {
    const env = backendEnv(dir)
    const { proxy, url } = proxyUrl(env.REGISTRY_MIRROR_DATABASE!)
    proxy.cut()
    const restored = Bun.sleep(2_000).then(() => proxy.restore())
    try {
      const started = performance.now()
      const server = await spawnServe(['--port', '0', '--data', dir], { ...env, REGISTRY_MIRROR_DATABASE: url })
      try {
        expect(performance.now() - started).toBeGreaterThan(1_500)
        expect((await fetch(`${server.url}/ready`)).status).toBe(200)
      } finally {
        server.proc.kill()
        await server.proc.exited
      }
    } finally {
      await restored
      proxy.stop()
    }
  }, 30_000)
})
