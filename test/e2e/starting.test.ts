/**
 * A request that reaches the binary after it listens but before it serves (here: while a large fixture loads) gets
 * the registry's error body, 503 `starting` with Retry-After, not a bare text: an instance restarted under traffic
 * answers clients that expect `{error, message}` and a hint when to come back.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { BIN, ensureBinary } from '../support/binary'

const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-starting-'))
beforeAll(ensureBinary)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The example fixture with its first node copied 3,000 times: loading it takes a while. */
function bigFixture(): string {
  const fixture = JSON.parse(readFileSync(resolve('test/fixtures/example-fixture.json'), 'utf8'))
  const [first] = fixture.nodes
  for (let i = 0; i < 3000; i++)
    fixture.nodes.push({ ...first, id: `copy-${i}`, versions: [{ ...first.versions[0], archive_base64: undefined }] })
  const file = join(dir, 'fixture.json')
  writeFileSync(file, JSON.stringify(fixture))
  return file
}

/** The fixture is loaded into a temporary data directory, also in the run on PostgreSQL and S3. */
function onDisk(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env }
  delete env.REGISTRY_MIRROR_DATABASE
  delete env.REGISTRY_MIRROR_STORAGE
  return env
}

const freePort = () => {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

test('503 starting with Retry-After and the error body while the server starts', async () => {
  const port = freePort()
  const proc = Bun.spawn([BIN, 'serve', '--fixture', bigFixture(), '--port', String(port), '--read-only'], {
    stdout: 'ignore',
    stderr: 'ignore',
    env: onDisk(),
  })
  try {
    let starting: Response | undefined
    const until = Date.now() + 30_000
    while (!starting && Date.now() < until) {
      const res = await fetch(`http://127.0.0.1:${port}/nodes/blur-pack`).catch(() => undefined)
      if (res?.status === 503) starting = res
      else if (res) throw new Error(`the server answered ${res.status} before any 503: the fixture loaded too fast`)
      else await Bun.sleep(5)
    }
    expect(starting).toBeDefined()
    expect(starting!.headers.get('retry-after')).toBe('1')
    expect(starting!.headers.get('content-type')).toContain('application/json')
    expect(await starting!.json()).toEqual({ error: 'starting', message: 'the server is starting; try again shortly' })
  } finally {
    proc.kill()
    await proc.exited
  }
}, 40_000)
