/**
 * Propagation benchmark: two instances of the built binary serving one registry; a node published on A, then the
 * time until B's search finds it (B's index follows the change feed: woken by LISTEN/NOTIFY on PostgreSQL, polling
 * every 2 s on a shared SQLite file). Reports p50/p99/max per backend, in one run.
 * Run: npm run build && bun scripts/bench/instances.ts [--database postgres://...] [--storage s3://... --s3-endpoint URL]
 *      [--writes N]   (S3 credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startServer, type BenchServer } from './server'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    database: { type: 'string' },
    storage: { type: 'string' },
    's3-endpoint': { type: 'string' },
    writes: { type: 'string', default: '200' },
  },
})
const WRITES = Number(values.writes)
const BIN = (await Bun.file('dist/registry-mirror').exists()) ? ['dist/registry-mirror'] : [process.execPath, 'src/main.ts']

async function measure(label: string, backendArgs: string[], writes: number, sharedData: boolean) {
  const dirA = mkdtempSync(join(tmpdir(), 'registry-mirror-bench-a-'))
  const dirB = sharedData ? dirA : mkdtempSync(join(tmpdir(), 'registry-mirror-bench-b-'))
  const database = backendArgs.filter((arg) => arg.startsWith('--database='))
  const user = Bun.spawnSync([...BIN, 'users', 'create', '--id', 'bench', '--email', 'b@x', '--name', 'B', '--data', dirA, ...database])
  if (user.exitCode !== 0) throw new Error(user.stderr.toString())
  const token = user.stdout.toString().trim()
  const a: BenchServer = await startServer(dirA, backendArgs)
  const b: BenchServer = await startServer(dirB, backendArgs)
  try {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    await fetch(`${a.url}/publishers`, { method: 'POST', headers, body: JSON.stringify({ id: 'bench', name: 'Bench' }) })
    const pat = (
      (await (await fetch(`${a.url}/publishers/bench/tokens`, { method: 'POST', headers, body: '{"name":"b"}' })).json()) as {
        token: string
      }
    ).token
    const delays: number[] = []
    for (let i = 0; i < writes; i++) {
      const word = `probe${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`
      const res = await fetch(`${a.url}/publishers/bench/nodes/${word}/versions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ personal_access_token: pat, node: { id: word, name: word }, node_version: { version: '1.0.0' } }),
      })
      if (res.status !== 201) throw new Error(`publish answered ${res.status}`)
      const committed = performance.now() // the write answered: committed on A, and in A's index
      for (;;) {
        const found = (await (await fetch(`${b.url}/nodes/search?search=${word}`)).json()) as { nodes: { id: string }[] }
        if (found.nodes.some((n) => n.id === word)) break
        if (performance.now() - committed > 10_000) throw new Error('B did not see the write within 10 s')
      }
      delays.push(performance.now() - committed)
    }
    delays.sort((x, y) => x - y)
    const at = (p: number) => delays[Math.min(delays.length - 1, Math.floor(delays.length * p))]!.toFixed(1)
    console.log(`${label.padEnd(34)} writes ${writes}: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${delays.at(-1)!.toFixed(1)} ms`)
  } finally {
    await a.stop()
    await b.stop()
    rmSync(dirA, { recursive: true, force: true })
    if (!sharedData) rmSync(dirB, { recursive: true, force: true })
  }
}

console.log('time from a write answered on A until B finds it with search:')
// Two processes on one data directory follow the feed by polling (every 2 s): fewer writes, they take long.
await measure('SQLite, one shared data directory', [], Math.min(WRITES, 10), true)
if (values.database) {
  const args = [`--database=${values.database}`]
  if (values.storage) args.push(`--storage=${values.storage}`)
  if (values['s3-endpoint']) args.push(`--s3-endpoint=${values['s3-endpoint']}`)
  await measure(`PostgreSQL${values.storage ? ' + S3' : ''}`, args, WRITES, false)
}
