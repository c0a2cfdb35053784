/**
 * Hostile-upload benchmark: the costliest archives of the hostile corpus uploaded 8 at a time through signed URLs,
 * several rounds, while a client polls GET /health; reports /health latency percentiles and the server's peak RSS
 * growth. Goals: /health p99 under 50 ms, RSS growth under 64 MiB.
 * Run: npm run build && bun scripts/bench/hostile.ts [--rounds N]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { costliestCases } from '../../test/support/hostile-archives'
import { mib, sampleMax, startServer } from './server'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } })
const ROUNDS = Number(values.rounds)
const P99_GOAL_MS = 50
const RSS_GOAL = 64 * 1024 * 1024

const cases = costliestCases()
const payloads = cases.map((c) => c.bytes())
console.log(
  `${cases.length} archives per round (${mib(payloads.reduce((n, p) => n + p.byteLength, 0))} MiB), ${ROUNDS} rounds, all 8 at once`,
)

const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-bench-'))
const dataDir = join(dir, 'data')
const server = await startServer(dataDir)
const cli = (await Bun.file('dist/registry-mirror').exists()) ? ['dist/registry-mirror'] : [process.execPath, 'src/main.ts']
const user = Bun.spawnSync([...cli, 'users', 'create', '--id', 'bench', '--email', 'b@x', '--name', 'B', '--data', dataDir])
const headers = { authorization: `Bearer ${user.stdout.toString().trim()}`, 'content-type': 'application/json' }
await fetch(`${server.url}/publishers`, { method: 'POST', headers, body: JSON.stringify({ id: 'bench', name: 'Bench' }) })

async function signedUrl(node: string): Promise<string> {
  const res = await fetch(`${server.url}/publishers/bench/nodes/${node}/versions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ node_version: { version: '1.0.0' } }),
  })
  return ((await res.json()) as { signedUrl: string }).signedUrl
}

async function pollHealth(until: Promise<unknown>, latencies: number[]): Promise<void> {
  let settled = false
  void until.finally(() => (settled = true))
  while (!settled) {
    const started = performance.now()
    await (await fetch(`${server.url}/health`)).arrayBuffer()
    latencies.push(performance.now() - started)
    await Bun.sleep(2)
  }
}

// A warm-up round's worth of idle polling gives the baseline.
const idle: number[] = []
await pollHealth(Bun.sleep(2_000), idle)
const latencies: number[] = []
const roundMs: number[] = []
const before = server.rssBytes()
const stopSampling = sampleMax(server.rssBytes)
let flagged = 0
for (let round = 0; round < ROUNDS; round++) {
  const urls = await Promise.all(cases.map((_, i) => signedUrl(`hostile-${round}-${i}`)))
  const started = performance.now()
  const uploads = Promise.all(
    urls.map(async (url, i) => {
      const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: payloads[i]! })
      const { node_version } = (await res.json()) as { node_version: { status: string } }
      if (node_version.status === 'NodeVersionStatusFlagged') flagged++
    }),
  )
  await pollHealth(uploads, latencies)
  await uploads
  roundMs.push(performance.now() - started)
}
const peak = stopSampling()
await server.stop()
rmSync(dir, { recursive: true, force: true })

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!
const p99 = percentile(latencies, 0.99)
const growth = peak - before
console.log(`idle /health: p50 ${percentile(idle, 0.5).toFixed(2)} ms, p99 ${percentile(idle, 0.99).toFixed(2)} ms`)
console.log(
  `under hostile uploads: ${latencies.length} /health answers, p50 ${percentile(latencies, 0.5).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, ` +
    `max ${Math.max(...latencies).toFixed(1)} ms (goal p99 < ${P99_GOAL_MS} ms) ${p99 < P99_GOAL_MS ? 'OK' : 'OVER'}`,
)
console.log(
  `rounds took ${roundMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s; ${flagged} of ${ROUNDS * cases.length} versions flagged`,
)
console.log(`server peak RSS growth: ${mib(growth)} MiB (goal < ${mib(RSS_GOAL)} MiB) ${growth < RSS_GOAL ? 'OK' : 'OVER'}`)
