/** Drives the compiled executable over real HTTP on 127.0.0.1, the way the publishing CLI and the manager do. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeZip, samplePack } from '../support/archives'
import { TEST_DATABASE } from '../support/backends'
import { BIN, cli as runCli, ensureBinary, startServer } from '../support/binary'

const data = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-'))

beforeAll(ensureBinary)
afterAll(() => rmSync(data, { recursive: true, force: true }))

const start = (...args: string[]) => startServer(data, ...args)
const cli = (...args: string[]) => runCli(data, ...args)

/** Response bodies in these tests are read as loosely typed JSON. */
const read = (res: Response): Promise<any> => res.json()
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
const zip = makeZip(samplePack([{ name: 'weights.bin', data: crypto.getRandomValues(new Uint8Array(64 * 1024)) }]))

describe('the compiled binary', () => {
  let token = ''
  let pat = ''

  test('publish, upload, install, download, search — as real clients do', async () => {
    const created = cli('users', 'create', '--id', 'alice', '--email', 'alice@example.com', '--name', 'Alice')
    expect(created.code).toBe(0)
    token = created.out
    const server = await start()
    const auth = { authorization: `Bearer ${token}` }
    const pub = await fetch(`${server.url}/publishers`, {
      ...json({ id: 'acme', name: 'Acme' }),
      headers: { ...auth, 'content-type': 'application/json' },
    })
    expect(pub.status).toBe(201)
    const tok = await fetch(`${server.url}/publishers/acme/tokens`, {
      ...json({ name: 'ci' }),
      headers: { ...auth, 'content-type': 'application/json' },
    })
    pat = (await read(tok)).token

    // The publishing CLI: POST the version with the token in the body, then PUT the zip to signedUrl.
    const published = await fetch(
      `${server.url}/publishers/acme/nodes/blur-pack/versions`,
      json({
        personal_access_token: pat,
        node: {
          id: 'blur-pack',
          name: 'Blur Pack',
          description: 'Blurs images',
          license: '{"file": "LICENSE"}',
          repository: 'https://github.com/acme/blur-pack',
          icon: '',
          banner_url: '',
        },
        node_version: { version: '1.0.0', dependencies: ['numpy'], changelog: 'first' },
      }),
    )
    expect(published.status).toBe(201)
    const { signedUrl, node_version } = await read(published)
    expect(node_version.changelog).toBe('first')
    const put = await fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: zip })
    expect(put.status).toBe(200)

    // The manager: install, then download from downloadUrl.
    const install = await read(await fetch(`${server.url}/nodes/blur-pack/install`))
    expect(install).toMatchObject({ version: '1.0.0', downloadUrl: `${server.url}/archives/acme/blur-pack/1.0.0/node.zip` })
    const download = await fetch(install.downloadUrl)
    expect(download.headers.get('etag')).toBe(`"${new Bun.CryptoHasher('sha256').update(zip).digest('hex')}"`)
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(zip)
    const page = await read(await fetch(`${server.url}/nodes?page=1&limit=30`, { headers: { 'cache-control': 'no-cache' } }))
    expect(page).toMatchObject({ total: 1, totalPages: 1 })
    expect(page.nodes[0]).toMatchObject({ id: 'blur-pack', publisher: { name: 'Acme' }, latest_version: { version: '1.0.0' } })
    const search = await read(await fetch(`${server.url}/nodes/search?search=blur`))
    expect(search.nodes.map((n: { id: string }) => n.id)).toEqual(['blur-pack'])
    // The manager asks for every installed pack in one address: 600 of them are some 20 KB (Bun's default was 16).
    const installed = Array.from({ length: 600 }, (_, i) => `node_id=ComfyUI-installed-pack-${i}`).join('&')
    const byIds = await fetch(`${server.url}/nodes?node_id=blur-pack&${installed}`)
    expect(byIds.status).toBe(200)
    expect((await read(byIds)).nodes.map((n: { id: string }) => n.id)).toEqual(['blur-pack'])

    // Bad input gets a clear 4xx, never a dropped connection.
    const bad = await fetch(`${server.url}/publishers/acme/nodes/blur-pack/versions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"node_version": ',
    })
    expect(bad.status).toBe(400)
    expect(await read(bad)).toEqual({ error: 'invalid_json', message: 'body: malformed JSON' })
    expect(await server.stop()).toBe(0)
  })

  test('a restart on the same data finds everything still there', async () => {
    const server = await start()
    const node = await read(await fetch(`${server.url}/nodes/blur-pack`))
    expect(node).toMatchObject({ id: 'blur-pack', downloads: 1, latest_version: { version: '1.0.0', status: 'NodeVersionStatusActive' } })
    const download = await fetch(`${server.url}/archives/acme/blur-pack/1.0.0/node.zip`)
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(zip)
    expect((await fetch(`${server.url}/users`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    const again = await fetch(
      `${server.url}/publishers/acme/nodes/blur-pack/versions`,
      json({ personal_access_token: pat, node_version: { version: '1.0.0' } }),
    )
    expect(again.status).toBe(409)
    expect(await server.stop()).toBe(0)
  })

  test('installs counted in memory reach the store at SIGTERM', async () => {
    let server = await start()
    const before = (await read(await fetch(`${server.url}/nodes/blur-pack`))).downloads as number
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.url}/nodes/blur-pack/install`)).status).toBe(200)
    expect(await server.stop()).toBe(0) // at once: well inside the flush interval
    server = await start()
    expect((await read(await fetch(`${server.url}/nodes/blur-pack`))).downloads).toBe(before + 5)
    expect(await server.stop()).toBe(0)
  })

  test('the data directory and its files are readable by their owner only', async () => {
    const { statSync } = await import('node:fs')
    expect(statSync(data).mode & 0o777).toBe(0o700)
    // On PostgreSQL the store and the signing key live in the database: the directory holds upload staging only.
    for (const file of TEST_DATABASE ? [] : ['registry.db', 'signing.key']) expect(statSync(join(data, file)).mode & 0o777).toBe(0o600)
  })

  test('a data directory written by a newer executable is refused by every command in one line, and left as it was', async () => {
    const { Database } = await import('bun:sqlite')
    const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-newer-'))
    try {
      // A data directory on SQLite in every pass: what is refused is the file's own schema version.
      expect(Bun.spawnSync([BIN, 'users', 'create', '--id', 'x', '--email', 'x@x', '--name', 'X', '--data', dir]).exitCode).toBe(0)
      const db = new Database(join(dir, 'registry.db'))
      db.run('pragma user_version = 999')
      db.close()
      for (const args of [
        ['serve', '--port', '0'],
        ['users', 'list'],
        ['users', 'create', '--id', 'bob', '--email', 'b@x.io', '--name', 'Bob'],
        ['users', 'promote', '--id', 'x'],
        ['tokens', 'list', '--user', 'x'],
        ['audit'],
        ['export', join(dir, 'out.tar')],
        ['import', join(dir, 'missing.tar')],
      ]) {
        const run = Bun.spawnSync([BIN, ...args, '--data', dir])
        const err = run.stderr.toString()
        expect({ args, code: run.exitCode, lines: err.trimEnd().split('\n').length }).toEqual({ args, code: 1, lines: 1 })
        expect(err).toMatch(/^cannot open the store in .+: the store has schema version 999, written by a newer registry-mirror;/)
      }
      expect(new Database(join(dir, 'registry.db')).query('pragma user_version').get()).toEqual({ user_version: 999 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a mistyped or impossible data directory, an export to a missing directory and files that are no bundle: one line each', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-paths-'))
    try {
      const file = join(dir, 'a-file')
      writeFileSync(file, '')
      writeFileSync(
        join(dir, 'random.bin'),
        new Uint8Array(100).map((_, i) => (i * 73 + 11) % 256),
      )
      writeFileSync(join(dir, 'spaces.txt'), ' '.repeat(100_000))
      const data = join(dir, 'data')
      expect(Bun.spawnSync([BIN, 'users', 'create', '--id', 'x', '--email', 'x@x', '--name', 'X', '--data', data]).exitCode).toBe(0)
      expect(Bun.spawnSync([BIN, 'export', '--data', data, join(dir, 'whole.tar')]).exitCode).toBe(0)
      const whole = readFileSync(join(dir, 'whole.tar'))
      writeFileSync(join(dir, 'cut.tar'), whole.subarray(0, 700)) // inside the manifest
      const typo = join(dir, 'dta')
      const cases: [args: string[], message: RegExp][] = [
        [['users', 'list', '--data', typo], /^no registry in .+dta: it has no registry\.db/],
        [['tokens', 'list', '--user', 'x', '--data', typo], /^no registry in .+dta/],
        [['audit', '--data', typo], /^no registry in .+dta/],
        [['export', '--data', typo, join(dir, 'out.tar')], /^no registry in .+dta/],
        [['users', 'list', '--data', file], /^cannot use .+a-file as the data directory: it is not a directory/],
        [
          ['users', 'create', '--id', 'y', '--email', 'y@y', '--name', 'Y', '--data', file],
          /^cannot use .+a-file as the data directory: EEXIST/,
        ],
        [['audit', '--data', file], /^cannot use .+a-file as the data directory/],
        [['serve', '--port', '0', '--data', file], /^cannot use .+a-file as the data directory/],
        [['export', '--data', data, join(dir, 'missing', 'out.tar')], /^cannot write .+out\.tar: ENOENT/],
        [['import', '--data', data, join(dir, 'random.bin')], /^not a registry-mirror bundle: /],
        [['import', '--data', data, join(dir, 'spaces.txt')], /^not a registry-mirror bundle: /],
        [['import', '--data', data, join(dir, 'cut.tar')], /^not a registry-mirror bundle: it is cut short/],
        // Blocks of zeros without end: a tar reader takes each for "no header" and reads on.
        [['import', '--data', data, '/dev/zero'], /^not a registry-mirror bundle: more than \d+ bytes are outside its members/],
      ]
      for (const [args, message] of cases) {
        const run = Bun.spawnSync([BIN, ...args])
        const err = run.stderr.toString()
        expect({ args, code: run.exitCode, lines: err.trimEnd().split('\n').length }).toEqual({ args, code: 1, lines: 1 })
        expect(err).toMatch(message)
      }
      // Nothing made where --data was mistyped.
      expect(existsSync(typo)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('SIGTERM stops an import at once (one line, exit 1): nothing applied, nothing staged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-stop-'))
    try {
      const [origin, target, bundle] = [join(dir, 'origin'), join(dir, 'target'), join(dir, 'bundle.tar')]
      for (const d of [origin, target])
        expect(Bun.spawnSync([BIN, 'users', 'create', '--id', 'x', '--email', 'x@x', '--name', 'X', '--data', d]).exitCode).toBe(0)
      expect(Bun.spawnSync([BIN, 'export', '--data', origin, bundle]).exitCode).toBe(0)
      // A pipe that gives the first part of the bundle (into its manifest) and then nothing: the import waits on it when stopped.
      const pipe = join(dir, 'pipe')
      expect(Bun.spawnSync(['mkfifo', pipe]).exitCode).toBe(0)
      const writer = Bun.spawn(['sh', '-c', 'exec 3>"$1"; head -c 700 "$0" >&3 && echo written && exec sleep 60', bundle, pipe])
      const importing = Bun.spawn([BIN, 'import', '--data', target, pipe], { stderr: 'pipe' })
      await writer.stdout.getReader().read() // the import has opened the pipe and has the first part to read
      importing.kill('SIGTERM')
      expect(await importing.exited).toBe(1)
      expect(await new Response(importing.stderr).text()).toBe('the import was stopped before anything was applied\n')
      writer.kill()
      expect(readdirSync(join(target, 'tmp'))).toEqual([])
      const { Database } = await import('bun:sqlite')
      const db = new Database(join(target, 'registry.db'))
      expect(db.query('select (select count(*) from nodes) as nodes, (select count(*) from mirror_sources) as sources').get()).toEqual({
        nodes: 0,
        sources: 0,
      })
      db.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('SIGTERM lets an upload in flight finish, then exits 0', async () => {
    const server = await start()
    const res = await fetch(
      `${server.url}/publishers/acme/nodes/blur-pack/versions`,
      json({ personal_access_token: pat, node_version: { version: '1.1.0' } }),
    )
    const { signedUrl } = await read(res)
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent >= zip.length) return controller.close()
        const chunk = zip.subarray(sent, sent + 4096)
        sent += chunk.length
        // Asked to stop once the server is surely handling the request, while its body still streams.
        if (sent === 4 * 4096) server.proc.kill('SIGTERM')
        await Bun.sleep(20)
        controller.enqueue(chunk)
      },
    })
    const put = await fetch(signedUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip', 'content-length': String(zip.length) },
      body,
    })
    expect(put.status).toBe(200)
    expect(await server.proc.exited).toBe(0)
    const after = await start()
    expect((await read(await fetch(`${after.url}/nodes/blur-pack`))).latest_version.version).toBe('1.1.0')
    expect(await after.stop()).toBe(0)
  })

  test('--help exits 0; bad settings exit 2 with one line each', () => {
    const help = Bun.spawnSync([BIN, 'serve', '--help'])
    expect(help.exitCode).toBe(0)
    expect(help.stdout.toString()).toContain('--public-url')
    const bad = Bun.spawnSync([BIN, 'serve', '--port', 'nine', '--max-upload-bytes=-1'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr.toString().trim().split('\n')).toHaveLength(2)
  })
})
