/**
 * Archive downloads: 50 KB archives (the bench store's 64 distinct blobs, one per latest version) under 32
 * connections, from registry-mirror's GET /archives/.../node.zip against a bare Bun.serve returning Bun.file of
 * the same files (bare-file-server.ts), each in its own process, alternated twice in one run; the ratio of the
 * best runs (goal: at least 60%). Checks first that ETag, If-None-Match (304) and Range (206) still work.
 * Run: npm run build && bun scripts/bench/archives.ts [--nodes 2200] [--seconds 5]
 */
import { Database } from 'bun:sqlite'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { loadAverage, ms, pct, quantile, runLoad } from './load'
import { benchStore } from './mixed'
import { cpuSeconds, spawnListening, startServer } from './server'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { nodes: { type: 'string', default: '2200' }, seconds: { type: 'string', default: '5' }, fresh: { type: 'boolean' } },
})
const SECONDS = Number(values.seconds)
const CONNECTIONS = 32
const dir = await benchStore(Number(values.nodes), values.fresh)

/** Download paths of every active node's latest version, and the blob each serves. */
const sqlite = new Database(join(dir, 'registry.db'), { readonly: true })
const archives = sqlite
  .query<{ publisher_id: string; id: string; version: string; sha256: string }, []>(
    `SELECT n.publisher_id, n.id, v.version, a.sha256 FROM nodes n JOIN node_versions v ON v.id = n.latest_version_id
     JOIN archives a ON a.version_id = v.id WHERE n.status = 'active'`,
  )
  .all()
sqlite.close()
const enc = encodeURIComponent
const registryPaths = archives.map((a) => `/archives/${enc(a.publisher_id)}/${enc(a.id)}/${enc(a.version)}/node.zip`)
const barePaths = archives.map((a) => `/${a.sha256}`)

const registry = await startServer(dir, process.env.BENCH_SERVER_ARGS?.split(' ').filter(Boolean) ?? [])
const bare = await spawnListening([process.execPath, join(import.meta.dir, 'bare-file-server.ts'), join(dir, 'blobs')], `${dir}-bare.log`)
try {
  // The registry keeps what clients rely on.
  const first = await fetch(registry.url + registryPaths[0])
  const etag = first.headers.get('etag')
  const size = (await first.arrayBuffer()).byteLength
  const notModified = await fetch(registry.url + registryPaths[0], { headers: { 'if-none-match': etag ?? '' } })
  const ranged = await fetch(registry.url + registryPaths[0], { headers: { range: 'bytes=100-199' } })
  const rangedBytes = (await ranged.arrayBuffer()).byteLength
  if (first.status !== 200 || !etag || notModified.status !== 304 || ranged.status !== 206 || rangedBytes !== 100) {
    throw new Error(`archive headers broken: ${first.status} ${etag} ${notModified.status} ${ranged.status} ${rangedBytes}`)
  }
  console.log(`archives: ${archives.length} paths over ${new Set(barePaths).size} files of ${size} bytes; ${CONNECTIONS} connections`)
  console.log(`ETag ${etag}, If-None-Match -> 304, Range -> 206: ok; load average ${loadAverage()}`)

  const run = async (base: string, paths: string[], pid: number) => {
    const cpu = cpuSeconds(pid)
    const result = await runLoad(base, {
      clients: CONNECTIONS,
      seconds: SECONDS,
      next: (c, i) => ({ path: paths[(c * 7919 + i * 31) % paths.length]! }),
    })
    return { ...result, cpuMs: ((cpuSeconds(pid) - cpu) * 1000) / result.requests }
  }
  await run(bare.url, barePaths, bare.proc.pid) // first visits: page cache, JIT
  await run(registry.url, registryPaths, registry.pid)
  const rounds: { bare: number; registry: number; bareCpu: number; registryCpu: number; failures: number }[] = []
  for (let i = 0; i < 3; i++) {
    const b = await run(bare.url, barePaths, bare.proc.pid)
    const r = await run(registry.url, registryPaths, registry.pid)
    rounds.push({ bare: b.perSecond, registry: r.perSecond, bareCpu: b.cpuMs, registryCpu: r.cpuMs, failures: r.failures + b.failures })
    console.log(
      `round ${i + 1}: bare Bun.serve ${b.perSecond.toFixed(0)}/s (${(b.cpuMs * 1000).toFixed(0)} µs CPU each), ` +
        `registry-mirror ${r.perSecond.toFixed(0)}/s (${(r.cpuMs * 1000).toFixed(0)} µs CPU each, p99 ${ms(quantile(r.latencies, 0.99))}) ` +
        `= ${pct(r.perSecond / b.perSecond)}; load average ${loadAverage()}`,
    )
  }
  const best = (k: 'bare' | 'registry') => Math.max(...rounds.map((r) => r[k]))
  const least = (k: 'bareCpu' | 'registryCpu') => Math.min(...rounds.map((r) => r[k]))
  console.log(
    `best of each: ${pct(best('registry') / best('bare'))} of the bare server's requests/s (goal >= 60%); ` +
      `CPU per request: ${pct(least('bareCpu') / least('registryCpu'))} of the bare server's efficiency; ` +
      `failures ${rounds.reduce((n, r) => n + r.failures, 0)}`,
  )
} finally {
  await registry.stop()
  bare.proc.kill('SIGTERM')
  await bare.proc.exited
}
