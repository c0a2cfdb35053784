/**
 * A server beside another process that holds the store's write lock (a command, another instance on the file):
 * `--hold` ms of every `--period`, for `--seconds`. Two clients post reviews (each a write that waits for the lock)
 * while two more poll every 10 ms: `GET /health` (no store) and `GET /users` (its token read from the store each
 * time). Reports the polls' latency (what waiting for the lock costs everything else) and the reviews' count, p99
 * and statuses.
 * Run: npm run build && bun scripts/bench/lock-wait.ts [--seconds 8] [--hold 150] [--period 300]
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { loadAverage, quantile } from './load'
import { spawnListening } from './server'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    seconds: { type: 'string', default: '8' },
    hold: { type: 'string', default: '150' },
    period: { type: 'string', default: '300' },
  },
})
const [SECONDS, HOLD_MS, PERIOD_MS] = [Number(values.seconds), Number(values.hold), Number(values.period)]
const BIN = resolve('dist/registry-mirror')
if (!existsSync(BIN)) throw new Error('build the binary first: npm run build')

const TOKEN = 'bench-token-000000000000000001'
const NODES = 50
const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-bench-lock-'))
const fixture = {
  time: '2026-01-01T00:00:00Z',
  users: [{ id: 'bench', tokens: [TOKEN] }],
  publishers: [{ id: 'acme', members: [{ user: 'bench', role: 'owner' }] }],
  nodes: Array.from({ length: NODES }, (_, i) => ({ id: `n${i}`, publisher: 'acme', versions: [{ version: '1.0.0' }] })),
}
await Bun.write(join(dir, 'fixture.json'), JSON.stringify(fixture))
const data = join(dir, 'data')
const server = await spawnListening(
  [BIN, 'serve', '--port', '0', '--data', data, '--fixture', join(dir, 'fixture.json')],
  join(dir, 'server.log'),
)

// The other process: bun:sqlite on the same file, waiting for the lock in SQLite's busy handler as any client would.
const holder = Bun.spawn(
  [
    process.execPath,
    '-e',
    `const { Database } = require('bun:sqlite')
    const db = new Database(${JSON.stringify(join(data, 'registry.db'))})
    db.run('PRAGMA busy_timeout = 5000')
    const end = Date.now() + ${SECONDS * 1000}
    while (Date.now() < end) {
      db.run('BEGIN IMMEDIATE')
      db.run('UPDATE registry_instance SET last_serial = last_serial WHERE id = 1')
      Bun.sleepSync(${HOLD_MS})
      db.run('COMMIT')
      Bun.sleepSync(${PERIOD_MS - HOLD_MS})
    }`,
  ],
  { stdout: 'ignore', stderr: 'inherit' },
)

let stop = false
const health: number[] = []
const reads: number[] = []
const reviews: number[] = []
const statuses = new Map<number, number>()
const auth = { authorization: `Bearer ${TOKEN}` }
const reviewer = async (first: number) => {
  for (let i = first; !stop; i++) {
    const started = performance.now()
    const res = await fetch(`${server.url}/nodes/n${i % NODES}/reviews?star=${1 + (i % 5)}`, { method: 'POST', headers: auth })
    await res.arrayBuffer()
    reviews.push(performance.now() - started)
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
  }
}
const poll = async (path: string, into: number[]) => {
  while (!stop) {
    const started = performance.now()
    const res = await fetch(server.url + path, { headers: auth })
    await res.arrayBuffer()
    if (!res.ok) throw new Error(`${path}: ${res.status}`)
    into.push(performance.now() - started)
    await Bun.sleep(10)
  }
}
const load = loadAverage()
try {
  const running = [reviewer(0), reviewer(NODES / 2), poll('/health', health), poll('/users', reads)]
  await holder.exited
  stop = true
  await Promise.all(running)
} finally {
  stop = true
  holder.kill()
  server.proc.kill('SIGTERM')
  await Promise.all([holder.exited, server.proc.exited])
  rmSync(dir, { recursive: true, force: true })
}

const ms = (sorted: number[], p: number) => quantile(sorted, p).toFixed(1)
const polled = (name: string, list: number[]) => {
  list.sort((a, b) => a - b)
  return `  ${name} every 10 ms: ${list.length} answered, p50 ${ms(list, 0.5)} ms, p99 ${ms(list, 0.99)} ms, max ${list.at(-1)!.toFixed(1)} ms`
}
reviews.sort((a, b) => a - b)
console.log(`another process holding the write lock ${HOLD_MS} ms of every ${PERIOD_MS}, ${SECONDS} s (load average ${load}):`)
console.log(polled('GET /health', health))
console.log(polled('GET /users (a store read)', reads))
console.log(
  `  reviews from 2 clients: ${reviews.length}, p50 ${ms(reviews, 0.5)} ms, p99 ${ms(reviews, 0.99)} ms; ` +
    `statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
)
