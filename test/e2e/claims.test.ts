/**
 * The compiled binary claims a node through a GitHub-compatible server this test starts, then the new
 * publisher publishes to it with its own token; moderation from the command line reaches a running server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_UNCLAIMED_PUBLISHER_ID as UNCLAIMED } from '../../src/domain/ids'
import { makeZip, samplePack } from '../support/archives'
import { cli as runBinary, ensureBinary, startServer } from '../support/binary'
import { startRepoHost } from '../support/repohost'

const data = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-claims-'))
const host = startRepoHost()

beforeAll(ensureBinary)
afterAll(async () => {
  await host.stop()
  rmSync(data, { recursive: true, force: true })
})

const read = (res: Response): Promise<any> => res.json()
const send = (method: string, token: string | undefined, body?: unknown): RequestInit => ({
  method,
  headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
  body: body === undefined ? undefined : JSON.stringify(body),
})

describe('claim-my-node on the compiled binary', () => {
  test('an owner claims a legacy node through the repository host, then publishes to it with their publisher token', async () => {
    const root = runBinary(data, 'users', 'create', '--id', 'root', '--email', 'root@example.com', '--name', 'Root', '--admin').out
    const alice = runBinary(data, 'users', 'create', '--id', 'alice', '--email', 'alice@example.com', '--name', 'Alice').out
    host.users.set('gho_alice', 'alice-gh')
    host.repos.set('octo/legacy', { admins: ['alice-gh'] })
    const server = await startServer(data, '--repohost-api-url', host.url)
    try {
      const url = server.url
      // The legacy node, under the unclaimed publisher, its repository on the host.
      expect((await fetch(`${url}/publishers`, send('POST', root, { id: UNCLAIMED, name: 'Unclaimed' }))).status).toBe(201)
      const node = await fetch(
        `${url}/publishers/${UNCLAIMED}/nodes`,
        send('POST', root, { id: 'legacy', repository: `${host.web}/octo/legacy` }),
      )
      expect(node.status).toBe(201)
      expect((await fetch(`${url}/publishers`, send('POST', alice, { id: 'alice-pub', name: 'Alice' }))).status).toBe(201)

      // What the web front end sends: the host token as GH_TOKEN.
      const claim = await fetch(`${url}/publishers/alice-pub/nodes/legacy/claim-my-node`, send('POST', alice, { GH_TOKEN: 'gho_alice' }))
      expect(claim.status).toBe(204)
      expect(host.requests.map((r) => r.path)).toEqual(['/user', '/repos/octo/legacy'])
      const read1 = await read(await fetch(`${url}/nodes/legacy`, { headers: { 'cache-control': 'no-cache, no-store, must-revalidate' } }))
      expect(read1.publisher.id).toBe('alice-pub')
      const again = await fetch(`${url}/publishers/alice-pub/nodes/legacy/claim-my-node`, send('POST', alice, { GH_TOKEN: 'gho_alice' }))
      expect(again.status).toBe(403)

      // The publishing CLI, with the new publisher's token.
      const pat = (await read(await fetch(`${url}/publishers/alice-pub/tokens`, send('POST', alice, { name: 'ci' })))).token
      const published = await fetch(
        `${url}/publishers/alice-pub/nodes/legacy/versions`,
        send('POST', undefined, {
          personal_access_token: pat,
          node: { id: 'legacy' },
          node_version: { version: '1.0.0', dependencies: [] },
        }),
      )
      expect(published.status).toBe(201)
      const { signedUrl } = await read(published)
      const put = await fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: makeZip(samplePack()) })
      expect(put.status).toBe(200)
      const install = await read(await fetch(`${url}/nodes/legacy/install`))
      expect(install).toMatchObject({ version: '1.0.0', downloadUrl: `${url}/archives/alice-pub/legacy/1.0.0/node.zip` })

      // The token went to the host only, and never into the store or the logs.
      expect(host.requests.every((r) => r.authorization === 'Bearer gho_alice')).toBe(true)
      const audit = runBinary(data, 'audit', '--json')
      expect(audit.out.split('\n').map((l) => JSON.parse(l).action)).toContain('node.claim')
      expect(await server.stop()).toBe(0)
      const stderr = server.log()
      expect(stderr).toContain('node.claimed')
      expect(stderr).not.toContain('gho_alice')
      for (const file of ['registry.db', 'registry.db-wal']) {
        const f = Bun.file(join(data, file))
        if (await f.exists()) expect(await f.text()).not.toContain('gho_alice')
      }
    } finally {
      server.proc.kill('SIGKILL')
    }
  })

  test('users ban from the command line takes effect on a running server at once; unban lifts it', async () => {
    const server = await startServer(data, '--repohost-api-url', host.url)
    try {
      const bob = runBinary(data, 'users', 'create', '--id', 'bob', '--email', 'bob@example.com', '--name', 'Bob').out
      const create = (id: string) => fetch(`${server.url}/publishers`, send('POST', bob, { id, name: id }))
      expect(runBinary(data, 'users', 'ban', '--id', 'bob')).toMatchObject({ code: 0, out: 'bob: not admin, banned' })
      expect(await read(await create('bobs'))).toMatchObject({ error: 'user_banned' })
      expect(runBinary(data, 'users', 'unban', '--id', 'bob').code).toBe(0)
      expect((await create('bobs')).status).toBe(201)
      expect(runBinary(data, 'audit', '--limit', '2').out).toContain('user.unban  user:bob')
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })
})
