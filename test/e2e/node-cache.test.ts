/**
 * `--node-cache-bytes` reaches the cache of rendered nodes: by default a node read twice is rendered once (the
 * second read a hit), with 0 every read renders it again, and a value that is not a whole number is refused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../../src/store/db'
import { BIN, ensureBinary, spawnServe } from '../support/binary'
import { parseScrape, series } from '../support/metrics'
import { seedNodes } from '../support/seed'

let dir: string
beforeAll(async () => {
  await ensureBinary()
  dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-node-cache-'))
  const db = await openStore(join(dir, 'registry.db'))
  await seedNodes(
    db,
    Array.from({ length: 20 }, (_, i) => ({ id: `pack-${i}` })),
  )
  await db.destroy()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Reads pack-1 twice, then the node cache's lookups from /metrics. */
async function lookupsAfterTwoReads(...args: string[]) {
  const { url, proc } = await spawnServe(['--port', '0', '--host', '127.0.0.1', '--data', dir, '--read-only', ...args])
  try {
    for (let i = 0; i < 2; i++) expect((await fetch(`${url}/nodes/pack-1`)).status).toBe(200)
    const scrape = parseScrape(await (await fetch(`${url}/metrics`)).text())
    const lookups = (result: string) => series(scrape, 'registry_mirror_cache_lookups_total', { cache: 'node_json', result })
    return { hit: lookups('hit'), miss: lookups('miss') }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}

test('by default a node read twice is rendered once', async () => {
  expect(await lookupsAfterTwoReads()).toEqual({ hit: 1, miss: 1 })
})

test('with --node-cache-bytes 0 every read renders the node again', async () => {
  expect(await lookupsAfterTwoReads('--node-cache-bytes', '0')).toEqual({ hit: 0, miss: 2 })
})

test('a value that is not a whole number is refused before serving', () => {
  const res = Bun.spawnSync([BIN, 'serve', '--data', dir, '--node-cache-bytes', '16MB'])
  expect(res.exitCode).not.toBe(0)
  expect(res.stderr.toString()).toContain('--node-cache-bytes: expected a whole number')
})
