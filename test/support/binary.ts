/**
 * The compiled executable for end-to-end tests: built once if REGISTRY_MIRROR_BIN is not given, started on a free port,
 * on the test backends of the run (support/backends.ts: a schema and a bucket prefix per data directory).
 */
import { expect } from 'bun:test'
import { resolve } from 'node:path'
import { backendEnv } from './backends'

export const BIN = process.env.REGISTRY_MIRROR_BIN ?? resolve('dist/registry-mirror')

let built: Promise<void> | undefined

/** Builds dist/registry-mirror unless REGISTRY_MIRROR_BIN names one; every test file of a run shares the one build. */
export function ensureBinary(): Promise<void> {
  if (process.env.REGISTRY_MIRROR_BIN) return Promise.resolve()
  built ??= (async () => {
    const build = Bun.spawn(['bun', 'scripts/build.ts'], {
      stdout: 'ignore',
      stderr: 'inherit',
      env: { ...process.env, PATH: `${resolve('node_modules/.bin')}:${process.env.PATH}` },
    })
    if ((await build.exited) !== 0) throw new Error('build failed')
  })()
  return built
}

export interface Server {
  url: string
  proc: ReturnType<typeof Bun.spawn>
  stop(): Promise<number>
  /** The end of its log (stderr) so far; all of it once stop() has resolved. */
  log(): string
}

/**
 * `serve --port 0` on 127.0.0.1 with this data directory; resolves once it prints where it listens. Its log (stderr)
 * is read all along, so a busy server never blocks on a full pipe, and its end is kept for the error of a failed start.
 */
export function startServer(data: string, ...args: string[]): Promise<Server> {
  return startServerOn(data, data, ...args)
}

/** As startServer, on the test backends named by `backendKey` (several instances of one registry share one). */
export async function startServerOn(data: string, backendKey: string, ...args: string[]): Promise<Server> {
  const proc = Bun.spawn([BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', data, ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, ...backendEnv(backendKey) },
  })
  let log = ''
  const logDone = (async () => {
    for await (const chunk of proc.stderr) log = (log + new TextDecoder().decode(chunk)).slice(-16_384)
  })()
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) {
      await logDone
      throw new Error(`server exited: ${log}`)
    }
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  const first = text.split('\n')[0]!
  expect(first).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/)
  return {
    url: first.replace('listening on ', ''),
    proc,
    async stop() {
      proc.kill('SIGTERM')
      const code = await proc.exited
      await logDone
      return code
    },
    log: () => log,
  }
}

/**
 * `serve` with exactly these arguments and environment additions (the run's test backends are not added; a variable
 * given as undefined is taken out); resolves with its URL once it prints where it listens, its stderr left for the
 * caller to read. `command`: what runs `serve` (the executable, unless a test runs it otherwise).
 */
export async function spawnServe(args: string[], env: Record<string, string | undefined> = {}, command: string[] = [BIN]) {
  const merged = { ...process.env, ...env }
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name]
  const proc = Bun.spawn([...command, 'serve', ...args], { stdout: 'pipe', stderr: 'pipe', env: merged })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited: ${await new Response(proc.stderr).text()}`)
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { url: text.split('\n')[0]!.replace('listening on ', ''), proc }
}

/** A command of the executable on this data directory. */
export function cli(data: string, ...args: string[]) {
  const res = Bun.spawnSync([BIN, ...args, '--data', data], { env: { ...process.env, ...backendEnv(data) } })
  return { code: res.exitCode, out: res.stdout.toString().trim(), err: res.stderr.toString() }
}

/** A request to a server started here: a JSON body when given, a bearer token when given. */
export const sendJson = (url: string, method: string, body?: unknown, token?: string) =>
  fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
