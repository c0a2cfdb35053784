/** The compiled executable as a CI fixture server: `serve --fixture example.json --read-only --port 0`, driven as real clients drive it. */
import { backendEnv, TEST_DATABASE } from '../support/backends'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { BIN, ensureBinary } from '../support/binary'

const EXAMPLE = resolve('test/fixtures/example-fixture.json')
const fixture = JSON.parse(readFileSync(EXAMPLE, 'utf8'))
const ALICE = fixture.users[0].tokens[0] as string
const PAT = fixture.publishers[0].tokens[0].token as string
const zip = new Uint8Array(Buffer.from(fixture.nodes[0].versions[0].archive_base64, 'base64'))

interface Server {
  url: string
  proc: ReturnType<typeof Bun.spawn>
  /** Log lines on stderr so far, parsed. */
  logs(): Record<string, unknown>[]
}

/** Spawns the binary and waits for its first stdout line, as a CI script does. */
async function start(args: string[], env: Record<string, string> = {}): Promise<Server> {
  const proc = Bun.spawn([BIN, 'serve', ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, ...backendEnv(crypto.randomUUID()), ...env },
  })
  let stderr = ''
  void (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited: ${stderr}`)
    text += new TextDecoder().decode(value)
  }
  const first = text.split('\n')[0]!
  expect(first).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/)
  return {
    url: first.replace('listening on ', ''),
    proc,
    logs: () =>
      stderr
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  }
}

const read = (res: Response): Promise<any> => res.json()
const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
})

beforeAll(ensureBinary)

describe('serve --fixture --read-only on the compiled binary', () => {
  let server: Server
  beforeAll(async () => (server = await start(['--fixture', EXAMPLE, '--read-only', '--port', '0'])))
  afterAll(() => server.proc.kill('SIGKILL'))

  test('the manager searches, lists, installs and downloads; nothing is counted', async () => {
    const search = await read(await fetch(`${server.url}/nodes/search?search=blur&page=1&limit=10`))
    expect(search.nodes.map((n: { id: string }) => n.id)).toEqual(['blur-pack'])
    const list = await read(await fetch(`${server.url}/nodes?page=1&limit=30`, { headers: { 'cache-control': 'no-cache' } }))
    expect(list).toMatchObject({ total: 2, totalPages: 1 })
    const install = await read(await fetch(`${server.url}/nodes/blur-pack/install`))
    expect(install).toMatchObject({ version: '1.0.0', downloadUrl: `${server.url}/archives/acme/blur-pack/1.0.0/node.zip` })
    const download = await fetch(install.downloadUrl)
    expect(download.status).toBe(200)
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(zip)
    const bulk = await read(
      await fetch(`${server.url}/bulk/nodes/versions`, post({ node_versions: [{ node_id: 'blur-pack', version: '1.0.0' }] })),
    )
    expect(bulk.node_versions[0].status).toBe('success')
    expect((await read(await fetch(`${server.url}/nodes/blur-pack`))).downloads).toBe(1000)
  })

  test('the fixed tokens work', async () => {
    const me = await fetch(`${server.url}/users`, { headers: { authorization: `Bearer ${ALICE}` } })
    expect(await read(me)).toMatchObject({ id: 'alice', name: 'Alice' })
  })

  test('the publishing CLI is refused with 403 read_only, with a valid token too; so are reviews', async () => {
    const publish = await fetch(
      `${server.url}/publishers/acme/nodes/blur-pack/versions`,
      post({ personal_access_token: PAT, node: { id: 'blur-pack' }, node_version: { version: '2.0.0' } }),
    )
    expect(publish.status).toBe(403)
    expect(await read(publish)).toEqual({
      error: 'read_only',
      message: 'This registry is read-only: it serves reads and installs, and refuses every write',
    })
    const upload = await fetch(`${server.url}/archives/acme/blur-pack/2.0.0/node.zip?expires=1&signature=x`, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip' },
      body: zip,
    })
    expect(upload.status).toBe(403)
    expect((await fetch(`${server.url}/nodes/blur-pack/reviews?star=5`, { method: 'POST' })).status).toBe(403)
    expect((await read(await fetch(`${server.url}/nodes/blur-pack/versions`))).map((v: { version: string }) => v.version)).toEqual([
      '1.1.0-rc.1',
      '1.0.0',
      '0.9.0',
    ])
  })

  test('SIGTERM exits 0 and removes the temporary data directory', async () => {
    const started = server.logs().find((l) => l.event === 'server.started')!
    expect(started).toMatchObject({ readOnly: true })
    const dir = started.data as string
    expect(existsSync(`${dir}/registry.db`)).toBe(TEST_DATABASE === undefined)
    expect(server.logs().find((l) => l.event === 'fixture.loaded')).toMatchObject({ nodes: 3, versions: 5, archives: 2, created: 14 })
    server.proc.kill('SIGTERM')
    expect(await server.proc.exited).toBe(0)
    expect(existsSync(dir)).toBe(false)
  })
})

test('a bad fixture named in the environment stops the binary with exit 2 and one line per problem', async () => {
  const file = `${process.env.TMPDIR ?? '/tmp'}/registry-mirror-e2e-bad-fixture-${process.pid}.json`
  await Bun.write(file, JSON.stringify({ nodes: [{ id: 'pack', publisher: 'nobody', versions: [{ version: 'one' }] }], extra: true }))
  try {
    const run = Bun.spawnSync([BIN, 'serve', '--port', '0'], { env: { ...process.env, REGISTRY_MIRROR_FIXTURE: file } })
    expect(run.exitCode).toBe(2)
    expect(run.stdout.toString()).toBe('')
    expect(run.stderr.toString().trim().split('\n')).toEqual([
      `${file}: nodes[0].versions[0].version: must be a semantic version`,
      `${file}: extra: unknown field`,
    ])
  } finally {
    await Bun.file(file).delete()
  }
})
