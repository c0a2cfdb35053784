/** The compiled binary's `blobs check` and `blobs sweep` beside a running server, as an operator runs them. */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BlobStore } from '../../src/blobs/blob-store'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { createS3BlobStore } from '../../src/blobs/s3'
import { makeZip, samplePack } from '../support/archives'
import { backendEnv } from '../support/backends'
import { BIN, cli as runCli, ensureBinary, startServer, type Server } from '../support/binary'

const data = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-blobs-'))
const staging = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-blobs-staging-'))
const cli = (...args: string[]) => runCli(data, ...args)
let server: Server

beforeAll(async () => {
  await ensureBinary()
  server = await startServer(data)
})
afterAll(async () => {
  await server.stop()
  rmSync(data, { recursive: true, force: true })
  rmSync(staging, { recursive: true, force: true })
})

/** The blob store the server uses (the data directory, or the test bucket), opened beside it. */
function serversBlobs(): BlobStore {
  const env = backendEnv(data)
  if (!env.REGISTRY_MIRROR_STORAGE) return createDiskBlobStore(data)
  return createS3BlobStore(
    {
      url: env.REGISTRY_MIRROR_STORAGE,
      endpoint: env.REGISTRY_MIRROR_S3_ENDPOINT,
      region: env.REGISTRY_MIRROR_S3_REGION,
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    },
    createDiskBlobStore(staging),
  )
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

async function publishArchive(token: string, zip: Uint8Array<ArrayBuffer>) {
  const auth = { authorization: `Bearer ${token}` }
  expect((await post('/publishers', { id: 'acme', name: 'Acme' }, auth)).status).toBe(201)
  const pat = ((await (await post('/publishers/acme/tokens', { name: 'ci' }, auth)).json()) as { token: string }).token
  const published = await post('/publishers/acme/nodes/blur-pack/versions', {
    personal_access_token: pat,
    node: { id: 'blur-pack', description: 'Blurs images' },
    node_version: { version: '1.0.0', dependencies: [] },
  })
  expect(published.status).toBe(201)
  const { signedUrl } = (await published.json()) as { signedUrl: string }
  const put = await fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: zip })
  expect(put.status).toBe(200)
}

test('check and sweep beside a running server: unreferenced bytes found and removed, missing ones listed with exit 3', async () => {
  const created = cli('users', 'create', '--id', 'alice', '--email', 'alice@example.com', '--name', 'Alice')
  expect(created.code).toBe(0)
  const zip = makeZip(samplePack([{ name: 'blur.py', data: '# blur\n' }]))
  await publishArchive(created.out, zip)
  expect(cli('blobs', 'check')).toMatchObject({
    code: 0,
    out: `stored: 1 blob, ${zip.length.toLocaleString('en')} bytes\nmissing: none (every archive and uploaded image has its bytes)\nunreferenced: none`,
  })

  // Bytes no row names, as a refused upload leaves them.
  const blobs = serversBlobs()
  const orphan = new TextEncoder().encode('left behind by a refused upload')
  const staged = await blobs.stage(new Blob([orphan]).stream(), 1_000_000)
  await staged.commit()
  const checked = cli('blobs', 'check')
  expect(checked.code).toBe(0)
  expect(checked.out).toContain(`unreferenced: 1 blob, ${orphan.length} bytes (blobs sweep removes those older than its grace)`)
  expect(checked.out).toContain(`  ${staged.sha256}  ${orphan.length} bytes  written `)

  expect(cli('blobs', 'sweep').out.split('\n').slice(0, 2)).toEqual([
    'removed 0 unreferenced blobs, 0 bytes, last written more than 24 hours ago',
    `kept 1 unreferenced blob, ${orphan.length} bytes, written since`,
  ])
  expect(cli('blobs', 'sweep', '--dry-run', '--older-than', '0').out.split('\n')[0]).toBe(
    `would remove 1 unreferenced blob, ${orphan.length} bytes, last written more than 0 hours ago`,
  )
  expect(await blobs.has(staged.sha256)).toBe(true)
  const swept = cli('blobs', 'sweep', '--older-than', '0')
  expect(swept.code).toBe(0)
  expect(swept.out.split('\n')[0]).toBe(`removed 1 unreferenced blob, ${orphan.length} bytes, last written more than 0 hours ago`)
  expect(await blobs.has(staged.sha256)).toBe(false)
  // The server goes on serving the archive a row needs.
  expect((await fetch(`${server.url}/nodes/blur-pack/install`)).status).toBe(200)

  // A bucket problem, a restored backup: the version's bytes are gone.
  const sha = new Bun.CryptoHasher('sha256').update(zip).digest('hex')
  await blobs.delete(sha)
  const missing = cli('blobs', 'check')
  expect(missing.code).toBe(3)
  expect(missing.out.split('\n').slice(1, 3)).toEqual([
    "missing: the bytes of 1 version's archive and 0 uploaded images (1 blob)",
    `  blur-pack@1.0.0 (active)  ${sha}`,
  ])
})

test('help, bad usage (exit 2) and a data directory without a registry (exit 1), each said in one line', () => {
  const help = Bun.spawnSync([BIN, 'help', 'blobs'])
  expect(help.exitCode).toBe(0)
  expect(help.stdout.toString()).toContain("Exit status: 0 when no row's bytes are missing, 3 when some are")
  expect(Bun.spawnSync([BIN, '--help']).stdout.toString()).toContain('blobs sweep')
  const bad = cli('blobs', 'sweep', '--older-than', 'soon')
  expect(bad.code).toBe(2)
  expect(bad.err.trim()).toBe('--older-than: expected a whole number of hours from 0 to 876000 (got "soon")')
  const unknown = cli('blobs', 'purge')
  expect(unknown).toMatchObject({ code: 2, err: 'unknown command "blobs purge"; run "registry-mirror help blobs"\n' })
  const nowhere = Bun.spawnSync([BIN, 'blobs', 'check', '--data', join(data, 'nowhere')])
  expect(nowhere.exitCode).toBe(1)
  expect(nowhere.stderr.toString().trim().split('\n')).toHaveLength(1)
})
