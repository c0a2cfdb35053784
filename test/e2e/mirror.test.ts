/**
 * The compiled binary as a mirror: sync with archives from another instance, stop that upstream, install and
 * compare bytes; export, import into a fresh directory, compare; and serve --sync-from keeping a server in step.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BIN, ensureBinary, spawnServe } from '../support/binary'
import { makeZip, samplePack } from '../support/archives'
import { parseScrape, series } from '../support/metrics'

const root = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-mirror-'))
const dir = (name: string) => join(root, name)

beforeAll(async () => {
  await ensureBinary()
})
/** Servers a failed test did not stop are stopped here, so none outlives the run. */
const running = new Set<ReturnType<typeof Bun.spawn>>()
afterAll(async () => {
  for (const proc of running) proc.kill('SIGKILL')
  await Promise.all([...running].map((p) => p.exited))
  rmSync(root, { recursive: true, force: true })
})

async function start(data: string, ...args: string[]) {
  const { url, proc } = await spawnServe(['--port', '0', '--data', data, ...args])
  running.add(proc)
  return {
    url,
    async stop() {
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
      running.delete(proc)
    },
  }
}

const run = (...args: string[]) => {
  const res = Bun.spawnSync([BIN, ...args])
  return { code: res.exitCode, out: res.stdout.toString().trim(), err: res.stderr.toString().trim() }
}
const get = async (url: string, init?: RequestInit): Promise<any> => (await fetch(url, init)).json()
const json = (body: unknown, token?: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
  body: JSON.stringify(body),
})
const zip = makeZip(samplePack([{ name: 'weights.bin', data: crypto.getRandomValues(new Uint8Array(100_000)) }]))
/** A node as read from a registry, with where its archive lives taken out. */
const portable = (node: any) => JSON.parse(JSON.stringify(node).replace(/http:\/\/127\.0\.0\.1:\d+/g, 'URL'))

describe('the binary as a mirror', () => {
  test('sync with archives, upstream stopped, install and compare bytes; export, import elsewhere, compare', async () => {
    const token = run('users', 'create', '--id', 'alice', '--email', 'a@example.com', '--name', 'Alice', '--data', dir('a')).out
    const a = await start(dir('a'))
    await fetch(`${a.url}/publishers`, json({ id: 'acme', name: 'Acme' }, token))
    const pat = (await get(`${a.url}/publishers/acme/tokens`, json({ name: 'ci' }, token))).token
    for (const version of ['1.0.0', '1.1.0']) {
      const published: any = await (
        await fetch(
          `${a.url}/publishers/acme/nodes/blur-pack/versions`,
          json({ personal_access_token: pat, node: { id: 'blur-pack', description: 'Blurs' }, node_version: { version } }),
        )
      ).json()
      const put = await fetch(published.signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: zip })
      expect(put.status).toBe(200)
    }
    const synced = run('sync', '--from', a.url, '--archives', '--data', dir('b'))
    expect(synced).toMatchObject({ code: 0, err: '' })
    expect(synced.out).toMatch(
      // Both versions have the same bytes: transferred once (the second is known by its SHA-256).
      /^sync from .*: complete \(full pass\); 1 publisher, 1 node, 2 versions changed, 0 removed; archives 2 stored \(9\d\.\d KiB fetched\)/,
    )
    const upstreamNode = await get(`${a.url}/nodes/blur-pack`)
    await a.stop()

    const b = await start(dir('b'))
    const install = await get(`${b.url}/nodes/blur-pack/install`)
    expect(install).toMatchObject({ version: '1.1.0', downloadUrl: `${b.url}/archives/acme/blur-pack/1.1.0/node.zip` })
    const download = await fetch(install.downloadUrl)
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(zip)
    const mirrored = await get(`${b.url}/nodes/blur-pack`)
    expect(portable({ ...mirrored, downloads: 0, publisher: { ...mirrored.publisher, members: [] } })).toEqual(
      portable({ ...upstreamNode, downloads: 0, publisher: { ...upstreamNode.publisher, members: [] } }),
    )

    const file = join(root, 'carry.tar')
    const exported = run('export', '--data', dir('b'), file)
    expect(exported.code).toBe(0)
    expect(exported.out).toMatch(
      /^exported serials 0\.\.\d+ of registry [0-9a-f-]+: \d+ changes, 1 archive .*; next time: export --since \d+$/,
    )
    const imported = run('import', '--data', dir('c'), file)
    expect(imported).toMatchObject({ code: 0, err: '' })
    expect(imported.out).toContain('; 1 archive (1 stored); 0 problems')
    // The same bundle again stores nothing, and says so.
    expect(run('import', '--data', dir('c'), file).out).toContain(
      '0 publishers, 0 nodes, 0 versions changed, 0 removed; 1 archive (0 stored, 1 already here); 0 problems',
    )
    const c = await start(dir('c'))
    // The install above is counted in b's memory and reaches its store (and so the export) up to a second later.
    const withoutCount = async (url: string) => portable({ ...(await get(url)), downloads: 0 })
    expect(await withoutCount(`${c.url}/nodes/blur-pack`)).toEqual(await withoutCount(`${b.url}/nodes/blur-pack`))
    expect(new Uint8Array(await (await fetch(`${c.url}/archives/acme/blur-pack/1.1.0/node.zip`)).arrayBuffer())).toEqual(zip)
    await c.stop()

    // serve --sync-from keeps a server in step with b, and says so.
    const d = await start(dir('d'), '--sync-from', b.url, '--sync-every', '1')
    let ready: any
    for (let i = 0; i < 100 && ready?.mirror?.state !== 'ok'; i++) {
      await Bun.sleep(50)
      ready = await get(`${d.url}/ready`)
    }
    expect(ready.mirror).toMatchObject({ upstream: b.url, state: 'ok' })
    // And so do its metrics, for an alert on a mirror that falls behind.
    const scrape = parseScrape(await (await fetch(`${d.url}/metrics`)).text())
    expect(series(scrape, 'registry_mirror_sync_state', { state: 'ok' })).toBe(1)
    expect(series(scrape, 'registry_mirror_sync_runs_total', { result: 'complete' })).toBeGreaterThanOrEqual(1)
    expect(series(scrape, 'registry_mirror_sync_lag_seconds')).toBeLessThan(60)
    // Its archives came with the sync (eager by default): with b gone, everything synced still installs.
    await b.stop()
    const viaD = await fetch(`${d.url}/nodes/blur-pack/install`)
    expect(viaD.status).toBe(200)
    const offline = await fetch(((await viaD.json()) as { downloadUrl: string }).downloadUrl)
    expect(offline.status).toBe(200)
    expect(new Uint8Array(await offline.arrayBuffer())).toEqual(zip)
    await d.stop()
  }, 60_000)

  test('sync from nowhere fails with a reason and a non-zero status; bad flags are usage errors', () => {
    const failed = run('sync', '--from', 'http://127.0.0.1:9', '--data', dir('e'), '--retries', '0')
    expect(failed.code).toBe(1)
    expect(failed.out).toMatch(/incomplete: .*cannot connect.*\(after 1 try\)/)
    expect(run('sync', '--data', dir('e')).code).toBe(2)
    expect(run('sync', '--from', 'ftp://x').err).toBe('--from: expected an absolute http(s) URL (got "ftp://x")')
    expect(run('import', '--data', dir('e'), join(root, 'missing.tar'))).toMatchObject({
      code: 1,
      err: `cannot read ${join(root, 'missing.tar')}: no such file`,
    })
  }, 60_000)
})
