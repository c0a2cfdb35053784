/**
 * Mixed-traffic benchmark: 8 clients against stores of 2,200 (the real registry's size), 10,000 and 100,000
 * nodes, each request drawn from the mix 40% distinct searches, 20% list pages across the whole catalogue,
 * 20% node reads, 10% installs, 10% version lists. Reports throughput as a ratio of GET /health under the
 * same clients in the same run (measured before and after the mix; their mean), p99 overall and per kind,
 * the server's peak resident memory (and the start-up's own: its peak while the index is built, its memory once
 * ready); then installs alone as a ratio of /health. The server logs at the default level into a file. Stores
 * are made by seed-store.ts (installs add downloads; --fresh reseeds).
 * With --by-kind, each kind of the mix also runs alone: its rate, share of /health and server CPU each say which
 * kind a change helped (or where the mix's time goes).
 * The mix is measured after `--warmup` seconds of it: at 100,000 nodes the compiler's thread spent 1.7 s of CPU in the
 * mix's first 10 s and 0.8, 0.24 and 0.22 s in the next three, and the server answered 742, 1,248, 1,310 and 1,468
 * requests a second; a run that began one second in measured code still being compiled.
 * Run: npm run build && bun scripts/bench/mixed.ts [--nodes 2200,10000,100000] [--seconds 10] [--warmup 10] [--clients 8] [--by-kind]
 * (BENCH_SERVER_ARGS="--node-cache-bytes 180000000" passes options to serve).
 */
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { healthRate, loadAverage, ms, pct, quantile, runLoad, type LoadRequest } from './load'
import { distinctSearches } from './queries'
import { picker, seededRandom } from './random'
import { seedBenchStore } from './seed-store'
import { cpuSeconds, mib, startServer, waitForIndex } from './server'

export const MIX: [kind: string, share: number][] = [
  ['search', 0.4],
  ['list', 0.2],
  ['node', 0.2],
  ['install', 0.1],
  ['versions', 0.1],
]

/**
 * The store of N nodes the benchmarks share (seeded on first use), read through once: the system's page cache then
 * holds it, as it does for a server that has run a while. After the machine dropped its cache (a virtual machine
 * restored from a snapshot starts with none), installs alone at 100,000 nodes (1.1 GB of store) ran at 2,605 and 2,708
 * a second, 8 s into their traffic, against 3,544 and 3,704 with the file read first (in turns).
 */
export async function benchStore(n: number, fresh = false): Promise<string> {
  const dir = join(tmpdir(), `registry-mirror-bench-${n}`)
  if (fresh || !existsSync(join(dir, 'registry.db'))) {
    const t0 = performance.now()
    await seedBenchStore(dir, n)
    console.log(`seeded ${n} nodes in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  }
  await readThrough(join(dir, 'registry.db'))
  return dir
}

async function readThrough(file: string): Promise<void> {
  const t0 = performance.now()
  let bytes = 0
  for await (const chunk of Bun.file(file).stream()) bytes += chunk.byteLength
  console.log(`read the store file (${(bytes / 2 ** 20).toFixed(0)} MiB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}

/** Ids of the active nodes of the store file (every one has an installable latest version). */
export function activeIdsIn(storeFile: string): string[] {
  const db = new Database(storeFile, { readonly: true })
  try {
    return db
      .query<{ id: string }, []>("SELECT id FROM nodes WHERE status = 'active'")
      .all()
      .map((r) => r.id)
  } finally {
    db.close()
  }
}

const enc = encodeURIComponent

/** An install of a node drawn from `ids`. */
const installOf = (id: string): LoadRequest => ({ kind: 'install', path: `/nodes/${enc(id)}/install` })

/**
 * Installs alone, seeded: drawn directly, so that the client's own work per request stays as small as for the
 * /health it is compared with (drawing from the whole mix made a distinct search for every install it skipped).
 */
export function installTraffic(ids: string[], seed: number): () => LoadRequest {
  const pick = picker(seededRandom(seed))
  return () => installOf(pick(ids))
}

/** The requests of one kind of the mix, seeded. */
export function trafficOfKind(ids: string[], seed: number, kind: string): () => LoadRequest {
  const next = mixedTraffic(ids, seed)
  return () => {
    for (;;) {
      const req = next()
      if (req.kind === kind) return req
    }
  }
}

/** A generator of the mix's requests, seeded. */
export function mixedTraffic(ids: string[], seed: number): () => LoadRequest {
  const random = seededRandom(seed)
  const pick = picker(random)
  const nextSearch = distinctSearches(seed + 1)
  return () => {
    let r = random()
    const kind = MIX.find(([, share]) => (r -= share) < 0)?.[0] ?? 'search'
    switch (kind) {
      case 'search':
        return { kind, path: `/nodes/search?${nextSearch()}` }
      case 'list': {
        const limit = pick([10, 30, 50])
        return { kind, path: `/nodes?page=${1 + Math.floor(random() * Math.ceil(ids.length / limit))}&limit=${limit}` }
      }
      case 'node':
        return { kind, path: `/nodes/${enc(pick(ids))}` }
      case 'install':
        return installOf(pick(ids))
      default:
        return { kind, path: `/nodes/${enc(pick(ids))}/versions` }
    }
  }
}

interface RunOptions {
  SECONDS: number
  WARMUP: number
  CLIENTS: number
  fresh?: boolean
  byKind?: boolean
}

async function runSize(n: number, { SECONDS, WARMUP, CLIENTS, fresh, byKind }: RunOptions) {
  const dir = await benchStore(n, fresh)
  const ids = activeIdsIn(join(dir, 'registry.db'))
  const server = await startServer(dir, process.env.BENCH_SERVER_ARGS?.split(' ').filter(Boolean) ?? [])
  try {
    const indexMs = await waitForIndex(server.url)
    // Where the peak comes from: the start-up (the index being built) or the traffic after it.
    const startPeak = server.peakRssBytes()
    const readyRss = server.rssBytes()
    /** Server CPU microseconds per request over a run: steadier than throughput when other work shares the machine. */
    const cpuPer = async <T extends { requests: number }>(run: () => Promise<T>) => {
      const before = cpuSeconds(server.pid)
      const result = await run()
      return { ...result, cpuUs: ((cpuSeconds(server.pid) - before) * 1e6) / result.requests }
    }
    const health1 = await cpuPer(() => runLoad(server.url, { clients: CLIENTS, seconds: SECONDS / 2, next: () => ({ path: '/health' }) }))
    const mixLoad = loadAverage()
    const next = mixedTraffic(ids, n)
    await runLoad(server.url, { clients: CLIENTS, seconds: WARMUP, next }) // the same distinct traffic, measured once compiled
    const mix = await cpuPer(() => runLoad(server.url, { clients: CLIENTS, seconds: SECONDS, next }))
    const health2 = await healthRate(server.url, CLIENTS, SECONDS / 2)
    const health = (health1.perSecond + health2) / 2
    const installs = await cpuPer(() => runLoad(server.url, { clients: CLIENTS, seconds: SECONDS / 2, next: installTraffic(ids, n + 2) }))
    const health3 = await healthRate(server.url, CLIENTS, SECONDS / 2)
    const peak = server.peakRssBytes()
    const kinds = MIX.map(([kind]) => `${kind} ${ms(quantile(mix.byKind.get(kind) ?? [], 0.99))}`).join(', ')
    console.log(`\n${n} nodes (index ready after ${(indexMs / 1000).toFixed(1)} s; load average ${mixLoad} at the start of the mix)`)
    console.log(
      `  GET /health:      ${health.toFixed(0)} req/s (${health1.perSecond.toFixed(0)} before, ${health2.toFixed(0)} after the mix)`,
    )
    console.log(
      `  mixed:            ${mix.perSecond.toFixed(0)} req/s = ${pct(mix.perSecond / health)} of /health (goal at 100k >= 40%), ` +
        `p50 ${ms(quantile(mix.latencies, 0.5))}, p99 ${ms(quantile(mix.latencies, 0.99))} (goal < 15 ms), failures ${mix.failures}`,
    )
    console.log(`  p99 by kind:      ${kinds}`)
    console.log(
      `  peak RSS:         ${mib(peak)} MiB (goal < 400); ${mib(startPeak)} MiB while the index was built, ${mib(readyRss)} MiB once it was ready`,
    )
    console.log(
      `  installs alone:   ${installs.perSecond.toFixed(0)} req/s = ${pct(installs.perSecond / health3)} of /health ` +
        `(${health3.toFixed(0)} right after; goal >= 50%), p99 ${ms(quantile(installs.latencies, 0.99))}, failures ${installs.failures}`,
    )
    const us = (x: number) => `${x.toFixed(0)} µs`
    console.log(
      `  server CPU each:  /health ${us(health1.cpuUs)}, mixed ${us(mix.cpuUs)} (/health's = ${pct(health1.cpuUs / mix.cpuUs)} of it), ` +
        `install ${us(installs.cpuUs)} (${pct(health1.cpuUs / installs.cpuUs)})`,
    )
    if (!byKind) return
    for (const [kind] of MIX) {
      const alone = await cpuPer(() =>
        runLoad(server.url, { clients: CLIENTS, seconds: SECONDS / 2, next: trafficOfKind(ids, n + 3, kind) }),
      )
      console.log(
        `  ${`${kind} alone:`.padEnd(18)}${alone.perSecond.toFixed(0)} req/s = ${pct(alone.perSecond / health)} of /health, ` +
          `${us(alone.cpuUs)} CPU each, p99 ${ms(quantile(alone.latencies, 0.99))}, failures ${alone.failures}`,
      )
    }
  } finally {
    await server.stop()
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      nodes: { type: 'string', default: '2200,10000,100000' },
      seconds: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '10' },
      clients: { type: 'string', default: '8' },
      fresh: { type: 'boolean' },
      'by-kind': { type: 'boolean' },
    },
  })
  const SECONDS = Number(values.seconds)
  const WARMUP = Number(values.warmup)
  const CLIENTS = Number(values.clients)
  console.log(`mixed traffic, ${CLIENTS} clients, ${SECONDS} s per run after ${WARMUP} s of the mix; load average ${loadAverage()}`)
  for (const n of values.nodes!.split(',').map(Number))
    await runSize(n, { SECONDS, WARMUP, CLIENTS, fresh: values.fresh, byKind: values['by-kind'] })
}
