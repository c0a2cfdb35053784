/**
 * Two instances of the built binary serving one registry: on PostgreSQL and S3-compatible storage when the run names
 * them (support/backends.ts), else two processes on one data directory. Writes on one are seen by the other's node
 * reads, search, installs and downloads; a ban on one is refused on the other; an upload cut off by a killed
 * instance leaves nothing half visible. Each check waits for the other instance to catch up (bounded), and says
 * how long it took; the benchmark (scripts/bench/instances.ts) measures that delay.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeZip, samplePack } from '../support/archives'
import { backendEnv, TEST_DATABASE } from '../support/backends'
import { cli, ensureBinary, startServerOn, type Server } from '../support/binary'
import { eventually } from '../support/eventually'

const shared = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-two-'))
// On PostgreSQL each instance has a data directory of its own (upload staging); on SQLite they share one.
const dirA = TEST_DATABASE ? mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-a-')) : shared
const dirB = TEST_DATABASE ? mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-b-')) : shared
let a: Server
let b: Server

beforeAll(async () => {
  await ensureBinary()
  a = await startServerOn(dirA, shared)
  b = await startServerOn(dirB, shared)
}, 30_000)
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
  for (const dir of new Set([shared, dirA, dirB])) rmSync(dir, { recursive: true, force: true })
}, 30_000)

const read = (res: Response): Promise<any> => res.json()
const post = (url: string, body: unknown, token?: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  })

/** Polls until `check` passes (at most 10 s: far past the second instances are held to); returns the milliseconds it took. */
const caughtUp = (check: () => Promise<boolean>) => eventually(check, { everyMs: 20, what: 'the other instance catching up' })

/**
 * Whether the upload of a node's version is claimed in the registry's store, read there directly: a PUT asking
 * would take the claim itself when it came first.
 */
async function uploadClaimed(nodeId: string, version: string): Promise<boolean> {
  const query = `select count(*) as n from upload_claims c join node_versions v on v.id = c.version_id
    where v.node_id = '${nodeId}' and v.version = '${version}'`
  const url = backendEnv(shared).REGISTRY_MIRROR_DATABASE
  if (url) {
    const sql = new SQL(url)
    try {
      return Number((await sql.unsafe(query))[0].n) > 0
    } finally {
      await sql.close()
    }
  }
  const db = new Database(join(shared, 'registry.db'), { readonly: true })
  try {
    return db.query<{ n: number }, []>(query).get()!.n > 0
  } finally {
    db.close()
  }
}

const zip = makeZip(samplePack([{ name: 'weights.bin', data: crypto.getRandomValues(new Uint8Array(256 * 1024)) }]))

describe('two instances, one registry', () => {
  let token = ''
  let adminToken = ''
  let pat = ''

  test('publish and upload on A; node read, search, install and download on B', async () => {
    token = cli(shared, 'users', 'create', '--id', 'alice', '--email', 'alice@example.com', '--name', 'Alice').out
    adminToken = cli(shared, 'users', 'create', '--id', 'root', '--email', 'root@example.com', '--name', 'Root', '--admin').out
    expect((await post(`${a.url}/publishers`, { id: 'acme', name: 'Acme' }, token)).status).toBe(201)
    pat = (await read(await post(`${a.url}/publishers/acme/tokens`, { name: 'ci' }, token))).token
    const published = await post(`${a.url}/publishers/acme/nodes/blur-pack/versions`, {
      personal_access_token: pat,
      node: { id: 'blur-pack', name: 'Blur Pack', description: 'Blurs images quickly' },
      node_version: { version: '1.0.0', dependencies: [] },
    })
    expect(published.status).toBe(201)
    const { signedUrl } = await read(published)
    expect(signedUrl.startsWith(a.url)).toBe(true)
    const put = await fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: zip })
    expect(put.status).toBe(200)

    await caughtUp(async () => (await read(await fetch(`${b.url}/nodes/blur-pack`))).latest_version?.version === '1.0.0')
    await caughtUp(async () => (await read(await fetch(`${b.url}/nodes/search?search=blur`))).nodes?.[0]?.id === 'blur-pack')
    expect((await read(await fetch(`${b.url}/nodes?limit=10`))).nodes.map((n: { id: string }) => n.id)).toEqual(['blur-pack'])
    const install = await read(await fetch(`${b.url}/nodes/blur-pack/install`))
    expect(install.downloadUrl.startsWith(b.url)).toBe(true)
    const download = await fetch(install.downloadUrl)
    expect(download.status).toBe(200)
    expect(download.headers.get('content-length')).toBe(String(zip.byteLength))
    expect(download.headers.get('etag')).toBe(`"${new Bun.CryptoHasher('sha256').update(zip).digest('hex')}"`)
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(zip)
    const range = await fetch(install.downloadUrl, { headers: { range: 'bytes=0-3' } })
    expect(range.status).toBe(206)
    expect(new Uint8Array(await range.arrayBuffer())).toEqual(zip.slice(0, 4))
  }, 30_000)

  test('a node banned on B is refused on A, in reads and installs', async () => {
    // A has read and cached the node: the ban must reach its caches, not only its store.
    expect((await fetch(`${a.url}/nodes/blur-pack`)).status).toBe(200)
    expect((await fetch(`${a.url}/nodes/blur-pack/install`)).status).toBe(200)
    const ban = await post(`${b.url}/publishers/acme/nodes/blur-pack/ban`, { reason: 'malware' }, adminToken)
    expect(ban.status).toBe(204)
    await caughtUp(async () => (await fetch(`${a.url}/nodes/blur-pack`)).status === 403)
    // A node read asks the store; A's remembered install answer goes when A's follower applies the ban (<= 1 s).
    await caughtUp(async () => (await fetch(`${a.url}/nodes/blur-pack/install`)).status === 403)
    await caughtUp(async () => (await read(await fetch(`${a.url}/nodes/search?search=blur`))).nodes.length === 0)
    expect((await post(`${b.url}/publishers/acme/nodes/blur-pack/unban`, {}, adminToken)).status).toBe(204)
    await caughtUp(async () => (await fetch(`${a.url}/nodes/blur-pack`)).status === 200)
  }, 30_000)

  test('A killed mid-upload leaves nothing half visible on B', async () => {
    const published = await post(`${a.url}/publishers/acme/nodes/blur-pack/versions`, {
      personal_access_token: pat,
      node: { id: 'blur-pack', name: 'Blur Pack', description: 'Blurs images quickly' },
      node_version: { version: '1.1.0', dependencies: [] },
    })
    expect(published.status).toBe(201)
    const url = new URL((await read(published)).signedUrl)
    // Announce the whole archive, send half of it, and kill A while it waits for the rest.
    const socket = await Bun.connect({ hostname: url.hostname, port: Number(url.port), socket: { data() {} } })
    socket.write(
      `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/zip\r\nContent-Length: ${zip.byteLength}\r\n\r\n`,
    )
    socket.write(zip.slice(0, zip.byteLength / 2))
    // A is mid-upload once it holds the URL's claim (in the database): a second PUT, on either instance, is refused.
    await caughtUp(() => uploadClaimed('blur-pack', '1.1.0'))
    const second = await fetch(`${b.url}${url.pathname}${url.search}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip' },
      body: 'x',
    })
    expect((await read(second)).error).toBe('upload_in_progress')
    a.proc.kill('SIGKILL')
    await a.proc.exited
    socket.end()

    const version = await read(await fetch(`${b.url}/nodes/blur-pack/versions/1.1.0`))
    expect(version.status).not.toBe('NodeVersionStatusActive')
    expect(version.downloadUrl ?? '').toBe('')
    expect((await fetch(`${b.url}/archives/acme/blur-pack/1.1.0/node.zip`)).status).toBe(404)
    expect((await read(await fetch(`${b.url}/nodes/blur-pack/install`))).version).toBe('1.0.0')
    expect((await read(await fetch(`${b.url}/nodes/blur-pack`))).latest_version.version).toBe('1.0.0')
  }, 30_000)
})
