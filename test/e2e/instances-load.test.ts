/**
 * Two instances of the built binary on one registry (PostgreSQL and S3 when the run names them, else one data
 * directory), under load: edits, new versions, reviews, a publisher's renames, a node's bans and installs sent to
 * both while clients read nodes, lists, searches, installs, archives and version lists from both, so that every
 * cache is filled while the other instance's writes land. Once the load stops, both must come to answer what a third
 * instance started afterwards (nothing cached) answers, and keep answering it: a write lost by an instance's caches
 * shows as an answer that never comes right. On S3, this found remembered downloads sent from evicted local copies.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeZip, samplePack } from '../support/archives'
import { TEST_DATABASE } from '../support/backends'
import { cli, ensureBinary, sendJson, startServerOn, type Server } from '../support/binary'
import { eventually } from '../support/eventually'

const shared = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-load-'))
const dirs = TEST_DATABASE ? ['a', 'b', 'c'].map((n) => mkdtempSync(join(tmpdir(), `registry-mirror-e2e-load-${n}-`))) : []
const dirOf = (i: number) => (TEST_DATABASE ? dirs[i]! : shared)
const servers: Server[] = []
/** Local copies of object storage that hold a few archives: they come and go under the load. */
const SERVE_ARGS = ['--storage-cache-bytes', '8192']

beforeAll(async () => {
  await ensureBinary()
  servers.push(await startServerOn(dirOf(0), shared, ...SERVE_ARGS), await startServerOn(dirOf(1), shared, ...SERVE_ARGS))
}, 30_000)
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()))
  for (const dir of new Set([shared, ...dirs])) rmSync(dir, { recursive: true, force: true })
}, 30_000)

const NODES = 6
const LOAD_MS = 5000
const nodeIds = Array.from({ length: NODES }, (_, i) => `load-${i}`)

const json = (res: Response): Promise<any> => res.json()
/** Archives of their own bytes (blobs are shared by their SHA-256), which do not compress: copies come and go. */
const newZip = () => makeZip(samplePack([{ name: 'a.bin', data: crypto.getRandomValues(new Uint8Array(2048)) }]))

/**
 * What a client sees of each node: the node, its version list, its archive, lists and searches, and its install
 * answer as a HEAD gives it (a GET counts a download). Nothing it asks changes what the next call sees.
 */
async function seen(url: string, words: Map<string, string>): Promise<string> {
  const text = async (path: string) => {
    const res = await fetch(url + path)
    return `${path} ${res.status} ${(await res.text()).replaceAll(url, 'URL')}`
  }
  const parts: string[] = [await text('/nodes?limit=50'), await text('/publishers/acme')]
  for (const id of nodeIds) {
    const node = await fetch(`${url}/nodes/${id}`)
    const answer = await node.text()
    parts.push(`node ${node.status} ${answer.replaceAll(url, 'URL')}`)
    const install = await fetch(`${url}/nodes/${id}/install`, { method: 'HEAD' })
    parts.push(`install ${install.status} ${install.headers.get('content-length')}`)
    const archiveUrl = node.ok ? JSON.parse(answer).latest_version?.downloadUrl : undefined
    if (archiveUrl) {
      const archive = await fetch(archiveUrl)
      parts.push(`archive ${archive.status} ${Bun.hash(await archive.arrayBuffer())}`)
    }
    parts.push(await text(`/nodes/${id}/versions`), await text(`/nodes/search?search=${words.get(id)}`))
  }
  return parts.join('\n')
}

test('under load on both instances, each comes to answer what a fresh instance answers', async () => {
  const [a, b] = servers as [Server, Server]
  const token = cli(shared, 'users', 'create', '--id', 'alice', '--email', 'alice@example.com', '--name', 'Alice').out
  const admin = cli(shared, 'users', 'create', '--id', 'root', '--email', 'root@example.com', '--name', 'Root', '--admin').out
  expect((await sendJson(`${a.url}/publishers`, 'POST', { id: 'acme', name: 'Acme' }, token)).status).toBe(201)
  const pat = (await json(await sendJson(`${a.url}/publishers/acme/tokens`, 'POST', { name: 'ci' }, token))).token
  const publish = async (url: string, id: string, version: string) => {
    const published = await sendJson(`${url}/publishers/acme/nodes/${id}/versions`, 'POST', {
      personal_access_token: pat,
      node: { id, name: id },
      node_version: { version, dependencies: [] },
    })
    if (published.status !== 201) return published
    const { signedUrl } = await json(published)
    return fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: newZip() })
  }
  for (const id of nodeIds) {
    expect((await publish(a.url, id, '1.0.0')).status).toBe(200)
    expect((await sendJson(`${a.url}/publishers/acme/nodes/${id}`, 'PUT', { description: 'word0' }, token)).status).toBe(200)
  }

  const words = new Map(nodeIds.map((id) => [id, 'word0']))
  const until = performance.now() + LOAD_MS
  const running = () => performance.now() < until
  const on = (i: number) => servers[i % 2]!.url
  const failures: string[] = []
  const expectOk = (what: string, res: Response) => {
    if (!res.ok) failures.push(`${what}: ${res.status}`)
  }

  // Each node but the one banned by turns written by one writer, on alternate instances: its description edited, or
  // a new version published (install answers, archives and version lists move). Its last answered description is
  // its truth.
  const writer = async (w: number) => {
    for (let k = 1; running(); k++)
      for (let i = 1 + w; i < NODES; i += 2) {
        const id = nodeIds[i]!
        if (k % 4 === 0) {
          expectOk('publish', await publish(on(k + i), id, `1.0.${k}`))
          continue
        }
        const word = `word${k}x${i}`
        expectOk('edit', await sendJson(`${on(k + i)}/publishers/acme/nodes/${id}`, 'PUT', { description: word }, token))
        words.set(id, word)
      }
  }
  const reviewer = async () => {
    for (let k = 0; running(); k++)
      expectOk('review', await sendJson(`${on(k)}/nodes/${nodeIds[k % NODES]}/reviews?star=${(k % 5) + 1}`, 'POST', undefined, token))
  }
  // The publisher renamed and a node banned and unbanned, by turns on each instance; the node ends unbanned.
  const moderator = async () => {
    for (let k = 0; running(); k++) {
      expectOk('rename', await sendJson(`${on(k)}/publishers/acme`, 'PUT', { name: `Acme ${k}` }, token))
      const action = k % 2 ? 'unban' : 'ban'
      expectOk(action, await sendJson(`${on(k + 1)}/publishers/acme/nodes/load-0/${action}`, 'POST', {}, admin))
    }
    expectOk('unban', await sendJson(`${a.url}/publishers/acme/nodes/load-0/unban`, 'POST', {}, admin))
  }
  /** Installs answered 200: each counted one download, and the store holds them all once the last flushes are in. */
  let installed = 0
  const reader = async (r: number) => {
    for (let k = 0; running(); k++) {
      const id = nodeIds[(k * 7 + r) % NODES]!
      const url = on(k + r)
      const paths = [`/nodes/${id}`, `/nodes/${id}/versions`, '/nodes?limit=50', `/nodes/search?search=${words.get(id)}`]
      if (k % 5 === 4) {
        const install = await fetch(`${url}/nodes/${id}/install`)
        if (install.ok) {
          installed++
          await (await fetch((await json(install)).downloadUrl)).arrayBuffer()
        } else await install.arrayBuffer()
      } else await (await fetch(url + paths[k % paths.length])).arrayBuffer()
    }
  }
  await Promise.all([writer(0), writer(1), reviewer(), moderator(), ...[0, 1, 2, 3].map(reader)])
  expect(failures).toEqual([])

  // The last second's installs are flushed after the load: the fresh instance's answers move on until then too, so
  // the answers agree once every install made is in the counts they show (three instances agreeing before the last
  // flush came in moved on together after it).
  const fresh = await startServerOn(dirOf(2), shared, ...SERVE_ARGS)
  servers.push(fresh)
  const downloadsShown = (text: string) => [...text.matchAll(/^node 200 \{"downloads":(\d+),/gm)].reduce((sum, [, n]) => sum + Number(n), 0)
  let answers: string[] = []
  const agree = async () => {
    answers = await Promise.all([fresh, a, b].map((s) => seen(s.url, words)))
    return answers.every((text) => text === answers[0]) && downloadsShown(answers[0]!) === installed
  }
  await eventually(agree, { everyMs: 250, withinMs: 8000 }).catch(() => {})
  for (const id of nodeIds) expect(answers[0]).toContain(`"description":"${words.get(id)}"`)
  expect(downloadsShown(answers[0]!)).toBe(installed)
  expect(answers[1]).toBe(answers[0]!)
  expect(answers[2]).toBe(answers[0]!)
  // And they stay so (what was remembered while answering, archives included, is still right when asked again).
  const settled = answers[0]
  await agree()
  expect(answers).toEqual([settled!, settled!, settled!])
}, 60_000)
