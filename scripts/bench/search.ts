/**
 * Search benchmark on a store of N nodes grown from the real packs (default 100,000), in one run:
 * - time until `serve` answers, until the index is complete, and resident memory then;
 * - latency p50/p99 of distinct keyword and filter queries (none repeated);
 * - requests/s of repeating client traffic (manager crawl, search-as-you-type) under 32 connections,
 *   as a ratio to GET /health on the same server.
 * With --database (an empty PostgreSQL database; the store is copied into it once), the same again on PostgreSQL.
 * Run: npm run build && bun scripts/bench/search.ts [--nodes N] [--fresh] [--database postgres://...]
 */
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { REAL_NODES } from '../../test/support/seed'
import { seedBenchStore } from './seed-store'
import { copyStore } from '../../src/store/copy'
import { openStore } from '../../src/store/db'
import { mib, startServer } from './server'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { nodes: { type: 'string', default: '100000' }, fresh: { type: 'boolean' }, database: { type: 'string' } },
})
const N = Number(values.nodes)
const dir = join(tmpdir(), `registry-mirror-bench-${N}`)
if (values.fresh || !existsSync(join(dir, 'registry.db'))) {
  const t0 = performance.now()
  await seedBenchStore(dir, N)
  console.log(`seeded ${N} nodes in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}
if (values.database) {
  // The same store on PostgreSQL (an empty database): copied as copy-store moves a registry.
  const [from, to] = [await openStore(join(dir, 'registry.db')), await openStore(values.database)]
  const held = await to
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  if (Number(held.n) === 0) {
    const t0 = performance.now()
    await copyStore(from, to)
    console.log(`copied the store into PostgreSQL in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  }
  await from.destroy()
  await to.destroy()
}

/** Start-up, latency of distinct queries and throughput of repeating traffic on a server with these backends. */
async function measure(serverArgs: string[]) {
  // 1. Start-up: answering, index complete, memory.
  const t0 = performance.now()
  const server = await startServer(dir, serverArgs)
  while (
    !(await fetch(`${server.url}/health`).then(
      (r) => r.ok,
      () => false,
    ))
  )
    await Bun.sleep(2)
  const answersMs = performance.now() - t0
  const warmDuring = (await (await fetch(`${server.url}/ready`)).json()) as { search: { state: string } }
  for (;;) {
    const ready = (await (await fetch(`${server.url}/ready`)).json()) as { search: { ready: boolean } }
    if (ready.search.ready) break
    await Bun.sleep(20)
  }
  const indexMs = performance.now() - t0
  await Bun.sleep(500)
  const rssReady = server.rssBytes()

  // 2. Latency of distinct queries.
  const real = REAL_NODES
  let seed = 11
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!
  const words = [
    ...new Set(
      real
        .flatMap((n) => `${n.name} ${n.description}`.split(/[^A-Za-z0-9]+/))
        .filter((w) => w.length >= 3)
        .map((w) => w.toLowerCase()),
    ),
  ]
  const nameWords = [
    ...new Set(
      real
        .flatMap((n) => n.name.split(/[^A-Za-z0-9]+/))
        .filter((w) => w.length >= 3)
        .map((w) => w.toLowerCase()),
    ),
  ]
  const typo = (w: string) => {
    const i = 1 + Math.floor(random() * (w.length - 2))
    return w.slice(0, i) + w.slice(i + 1)
  }
  const OS = ['POSIX', 'POSIX :: Linux', 'Microsoft :: Windows', 'MacOS', 'OS Independent']
  const ACC = ['GPU', 'GPU :: NVIDIA CUDA', 'GPU :: AMD ROCm', 'NPU']
  const makers: (() => string)[] = [
    () => `search=${pick(nameWords)}`,
    () => `search=${pick(words)}`,
    () => `search=${pick(nameWords).slice(0, 3 + Math.floor(random() * 3))}`,
    () => `search=${typo(pick(nameWords.filter((w) => w.length >= 6)))}`,
    () => `search=${pick(nameWords)}%20${pick(nameWords)}`,
    () => `search=${pick(nameWords)}&supported_os=${encodeURIComponent(pick(OS))}`,
    () => `search=${pick(nameWords)}&supported_accelerator=${encodeURIComponent(pick(ACC))}&page=${1 + Math.floor(random() * 3)}`,
    () =>
      `supported_os=${encodeURIComponent(pick(OS))}&supported_accelerator=${encodeURIComponent(pick(ACC))}&page=${1 + Math.floor(random() * 100)}`,
    () => `repository_url_search=${encodeURIComponent(pick(real).repository.replace('https://', '').split('/').slice(0, 2).join('/'))}`,
    () =>
      `host_node_search=${encodeURIComponent(pick(pick(real.filter((n) => n.host_nodes.length)).host_nodes).slice(0, 6 + Math.floor(random() * 6)))}`,
    () => `page=${1 + Math.floor(random() * 3000)}&limit=${pick([10, 30, 50])}`,
    () => `search=${pick(nameWords)}&include_banned=true&limit=${pick([10, 30])}`,
  ]
  const queries = new Set<string>()
  while (queries.size < 2000) queries.add(pick(makers)())
  const latencies: number[] = []
  for (const q of queries) {
    const path = q.startsWith('page=') ? '/nodes' : '/nodes/search'
    const start = performance.now()
    const res = await fetch(`${server.url}${path}?${q}`)
    await res.arrayBuffer()
    latencies.push(performance.now() - start)
    if (!res.ok) throw new Error(`${q} answered ${res.status}`)
  }
  latencies.sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!

  // 3. Throughput of repeating traffic against /health, 32 connections each.
  const prefixes = ['controlnet', 'upscale', 'video', 'animatediff', 'impact', 'lora'].flatMap((w) =>
    Array.from(w, (_, i) => w.slice(0, i + 1)),
  )
  const crawlPages = Math.min(200, Math.ceil(N / 30)) // the upstream registry's size (~4,000 nodes) in pages of 30, at most
  const traffic = [
    ...Array.from({ length: crawlPages }, (_, i) => `/nodes?page=${i + 1}&limit=30`),
    ...prefixes.map((p) => `/nodes/search?search=${p}&limit=10`),
  ]
  async function rps(paths: string[], seconds: number): Promise<number> {
    let done = 0
    const until = performance.now() + seconds * 1000
    await Promise.all(
      Array.from({ length: 32 }, async (_, c) => {
        for (let i = c; performance.now() < until; i += 32) {
          const res = await fetch(`${server.url}${paths[i % paths.length]}`)
          await res.arrayBuffer()
          done++
        }
      }),
    )
    return done / seconds
  }
  await rps(traffic, 2) // warm: first visits render and cache
  await rps(['/health'], 1)
  const health = await rps(['/health'], 5)
  const repeating = await rps(traffic, 5)
  const rssAfter = server.rssBytes()
  await server.stop()

  return {
    answersMs,
    warmState: warmDuring.search.state,
    indexMs,
    rssReady,
    rssAfter,
    latencies,
    health,
    repeating,
    crawlPages,
    traffic: traffic.length,
  }
}

const local = await measure([])
const remote = values.database ? await measure([`--database=${values.database}`]) : undefined

function report(r: Awaited<ReturnType<typeof measure>>) {
  const { answersMs, warmState, indexMs, rssReady, rssAfter, latencies, health, repeating, crawlPages } = r
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!
  const ms = (x: number) => `${x.toFixed(1)} ms`
  console.log(`nodes: ${N} (store ${dir})`)
  console.log(`answers requests after: ${ms(answersMs)} (goal < 1000 ms; search state then: ${warmState})`)
  console.log(`index complete after:   ${ms(indexMs)} (goal < 8000 ms)`)
  console.log(`resident memory:        ${mib(rssReady)} MiB when the index is complete (goal < 600), ${mib(rssAfter)} MiB after the load`)
  console.log(
    `distinct queries:       ${latencies.length}, p50 ${ms(pct(0.5))}, p90 ${ms(pct(0.9))}, p99 ${ms(pct(0.99))}, max ${ms(latencies.at(-1)!)} (goal p50 < 5, p99 < 25)`,
  )
  console.log(`GET /health:            ${health.toFixed(0)} req/s (32 connections)`)
  console.log(
    `repeating traffic:      ${repeating.toFixed(0)} req/s (${r.traffic} distinct paths: crawl of ${crawlPages} pages of 30, search-as-you-type)`,
  )
  console.log(`ratio:                  ${((repeating / health) * 100).toFixed(0)}% (goal >= 50%)`)
}

report(local)
if (remote) {
  console.log(`--- PostgreSQL (same run, same ${N} nodes) ---`)
  report(remote)
}
