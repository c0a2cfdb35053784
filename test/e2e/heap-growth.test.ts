/**
 * `serve` starts itself again with the runtime's heap growth set (src/heap-growth.ts): the same process, its
 * arguments and the executable's own flags kept; a value the operator set is left as it is.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HEAP_GROWTH_VARIABLE, SERVER_HEAP_GROWTH } from '../../src/heap-growth'
import { ensureBinary, spawnServe } from '../support/binary'

const data = mkdtempSync(join(tmpdir(), 'registry-mirror-heap-'))

beforeAll(ensureBinary)
afterAll(() => rmSync(data, { recursive: true, force: true }))

/** `serve` with the variable as given (undefined: not in its environment at all). */
async function serveWith(value: string | undefined) {
  const { url, proc } = await spawnServe(['--port', '0', '--host', '127.0.0.1', '--data', data], { [HEAP_GROWTH_VARIABLE]: value })
  // Read from the kernel: the environment the running server was started with, under the pid it was spawned as.
  const environ = readFileSync(`/proc/${proc.pid}/environ`, 'utf8').split('\0')
  const cmdline = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
  return { url, proc, environ, cmdline }
}

test('serve runs with the heap growth set, as the same process with its arguments and flags', async () => {
  const server = await serveWith(undefined)
  try {
    expect(server.environ).toContain(`${HEAP_GROWTH_VARIABLE}=${SERVER_HEAP_GROWTH}`)
    expect(server.cmdline.slice(1)).toEqual(['serve', '--port', '0', '--host', '127.0.0.1', '--data', data])
    expect((await fetch(`${server.url}/health`)).status).toBe(200)
    // The executable's own flag (requests' headers up to 64 KiB) holds after the start again: 20 KB of address.
    const long = Array.from({ length: 600 }, (_, i) => `node_id=pack-${i}`).join('&')
    expect((await fetch(`${server.url}/nodes?${long}`)).status).toBe(200)
  } finally {
    server.proc.kill('SIGTERM')
    expect(await server.proc.exited).toBe(0)
  }
})

test("the operator's own value is kept", async () => {
  const server = await serveWith('1.5')
  try {
    expect(server.environ).toContain(`${HEAP_GROWTH_VARIABLE}=1.5`)
    expect(server.environ.filter((e) => e.startsWith(`${HEAP_GROWTH_VARIABLE}=`))).toHaveLength(1)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
})

test('from source under the sampling profiler, serve runs without starting again and writes its profile', async () => {
  // Started again under the profiler, the process died at once by a signal, with no word.
  const profiles = mkdtempSync(join(tmpdir(), 'registry-mirror-prof-'))
  const { url, proc } = await spawnServe(['--port', '0', '--host', '127.0.0.1', '--data', data], { [HEAP_GROWTH_VARIABLE]: undefined }, [
    process.execPath,
    '--cpu-prof',
    `--cpu-prof-dir=${profiles}`,
    'src/main.ts',
  ])
  try {
    expect((await fetch(`${url}/health`)).status).toBe(200)
    const environ = readFileSync(`/proc/${proc.pid}/environ`, 'utf8').split('\0')
    expect(environ.some((e) => e.startsWith(`${HEAP_GROWTH_VARIABLE}=`))).toBe(false)
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
    expect(readdirSync(profiles).some((f) => f.endsWith('.cpuprofile'))).toBe(true)
  } finally {
    proc.kill('SIGKILL')
    rmSync(profiles, { recursive: true, force: true })
  }
})
