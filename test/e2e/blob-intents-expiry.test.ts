/**
 * serve drops expired blob intents in its hourly sweep (and at start), as `blobs sweep` does: the intents of killed
 * writers no longer pile up, holding their bytes, on a registry whose operator never runs a sweep.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { intendBlobs } from '../../src/services/blob-intent'
import { openStore } from '../../src/store/db'
import { backendEnv } from '../support/backends'
import { cli, ensureBinary, startServer } from '../support/binary'

const data = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-intents-'))
afterAll(() => rmSync(data, { recursive: true, force: true }))

test('a server drops the intents older than a day when it starts, and keeps the others', async () => {
  await ensureBinary()
  expect(cli(data, 'users', 'create', '--id', 'al', '--email', 'al@x.io', '--name', 'Al').code).toBe(0)
  const db = await openStore(backendEnv(data).REGISTRY_MIRROR_DATABASE ?? join(data, 'registry.db'))
  try {
    const killed = { db, now: () => new Date(Date.now() - 25 * 3600_000) }
    await intendBlobs(killed, ['a'.repeat(64), 'b'.repeat(64)])
    await intendBlobs({ db, now: () => new Date() }, ['c'.repeat(64)])
    const server = await startServer(data)
    let left: string[] = []
    for (let i = 0; i < 50; i++) {
      left = (await db.selectFrom('blob_intents').select('sha256').orderBy('sha256').execute()).map((r) => r.sha256)
      if (left.length < 3) break
      await Bun.sleep(100)
    }
    await server.stop()
    expect(left).toEqual(['c'.repeat(64)])
  } finally {
    await db.destroy()
  }
})
