/**
 * What the per-request middleware (request id, log scope, metrics; src/http/observe.ts) costs, as GET /health
 * capacity with it against without it (server CPU time per request, and throughput), each server in its own
 * process, measured in one run:
 * - bare:       CORS + the real system routes, no middleware
 * - noscope:    + request id, route label, timing; no log scope, metrics instruments that do nothing
 * - ids:        + the log scope (AsyncLocalStorage) that tags log lines with the request id
 * - prom:       + the real prom-client metrics (what the registry serves)
 * - prom+log:   + the access line written at the default level (info) to /dev/null
 * and, in this process, what prom-client's counter and histogram cost per request against the same counts kept
 * in plain Maps (the least any implementation could do), to see whether hand-written metrics would pay.
 * Run: bun scripts/bench/observe.ts [--seconds 0.5] [--rounds 30]
 */
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { parseArgs } from 'node:util'
import { openSync, readFileSync, writeSync } from 'node:fs'
import { observe } from '../../src/http/observe'
import { systemRoutes } from '../../src/http/system'
import { createLog } from '../../src/log'
import { createMetrics, type Metrics } from '../../src/metrics'
import type { Deps } from '../../src/services/deps'

const VARIANTS = ['bare', 'noscope', 'ids', 'prom', 'prom+log'] as const
type Variant = (typeof VARIANTS)[number]

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { serve: { type: 'string' }, seconds: { type: 'string', default: '0.5' }, rounds: { type: 'string', default: '30' } },
})

const noMetrics = { httpRequests: { inc() {} }, httpDuration: { observe() {} } } as unknown as Metrics

function serve(variant: Variant) {
  const devNull = openSync('/dev/null', 'w')
  const log = createLog({ level: variant === 'prom+log' ? 'info' : 'warn', write: (line) => writeSync(devNull, line + '\n') })
  if (variant === 'noscope') log.within = (_fields, fn) => fn()
  const metrics = variant === 'ids' || variant === 'noscope' ? noMetrics : createMetrics()
  const deps = { log, metrics, settings: { metrics: true } } as unknown as Deps
  const app = new Hono({ strict: false })
  if (variant !== 'bare') app.use(observe(deps))
  app.use(cors({ origin: '*' }))
  app.route(
    '/',
    systemRoutes(deps, () => ({})),
  )
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch })
  console.log(`listening on ${server.url.href.replace(/\/$/, '')}`)
}

async function start(variant: Variant) {
  const proc = Bun.spawn([process.execPath, import.meta.path, '--serve', variant], { stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${variant} exited before listening`)
    text += new TextDecoder().decode(value)
  }
  return { url: text.split('\n')[0]!.replace('listening on ', ''), pid: proc.pid, stop: () => (proc.kill(), proc.exited) }
}

/** CPU seconds (user + system, all threads) the process has used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100)
}

async function rps(url: string, seconds: number): Promise<number> {
  let done = 0
  const until = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < until) {
        await (await fetch(`${url}/health`)).arrayBuffer()
        done++
      }
    }),
  )
  return done / seconds
}

/** Microseconds per call of `fn`, after a warm-up, over many calls. */
function perCall(fn: (i: number) => void, n = 500_000): number {
  for (let i = 0; i < 50_000; i++) fn(i)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) fn(i)
  return ((performance.now() - t0) * 1000) / n
}

/** One request's counting: prom-client's calls as observe() makes them, and the same counts in plain Maps. */
function instrumentCost(): { prom: number; plain: number } {
  const routes = ['/health', '/nodes', '/nodes/:nodeId', '/nodes/search']
  const metrics = createMetrics()
  const prom = (i: number) => {
    const route = routes[i & 3]!
    metrics.httpRequests.inc({ method: 'GET', route, status: 200 })
    metrics.httpDuration.observe({ method: 'GET', route }, 0.0003)
  }
  const bounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
  const counts = new Map<string, number>()
  const histograms = new Map<string, { buckets: Float64Array; sum: number }>()
  const plain = (i: number) => {
    const route = routes[i & 3]!
    const key = `GET ${route} 200`
    counts.set(key, (counts.get(key) ?? 0) + 1)
    let h = histograms.get(`GET ${route}`)
    if (!h) histograms.set(`GET ${route}`, (h = { buckets: new Float64Array(bounds.length + 1), sum: 0 }))
    let b = 0
    while (b < bounds.length && 0.0003 > bounds[b]!) b++
    h.buckets[b]!++
    h.sum += 0.0003
  }
  const runs = Array.from({ length: 3 }, () => ({ prom: perCall(prom), plain: perCall(plain) }))
  return { prom: Math.min(...runs.map((r) => r.prom)), plain: Math.min(...runs.map((r) => r.plain)) }
}

if (values.serve) serve(values.serve as Variant)
else {
  // All servers run at once and take turns in short slices, so that a busy machine (other work on the same
  // cores) weighs on every variant alike; each variant's figure is the median of its ratios to the bare slice
  // of the same round.
  const seconds = Number(values.seconds)
  const rounds = Number(values.rounds)
  const servers = new Map<Variant, Awaited<ReturnType<typeof start>>>()
  for (const variant of VARIANTS) servers.set(variant, await start(variant))
  for (const server of servers.values()) await rps(server.url, 0.5) // warm-up
  const throughput = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]))
  const cpu = new Map<Variant, { seconds: number; requests: number }>(VARIANTS.map((v) => [v, { seconds: 0, requests: 0 }]))
  for (let round = 0; round < rounds; round++) {
    const order = [...VARIANTS.slice(round % VARIANTS.length), ...VARIANTS.slice(0, round % VARIANTS.length)]
    for (const variant of order) {
      const { url, pid } = servers.get(variant)!
      const before = cpuSeconds(pid)
      const r = await rps(url, seconds)
      throughput.get(variant)!.push(r)
      const used = cpu.get(variant)!
      used.seconds += cpuSeconds(pid) - before
      used.requests += r * seconds
    }
  }
  for (const server of servers.values()) await server.stop()
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const bare = throughput.get('bare')!
  const perRequest = (v: Variant) => (cpu.get(v)!.seconds / cpu.get(v)!.requests) * 1e6
  console.log(`GET /health, 32 connections, ${rounds} rounds of ${seconds} s slices per variant.`)
  console.log(`Server CPU per request decides what a server can answer on a busy machine; throughput ratios are noisier.`)
  for (const [variant, runs] of throughput) {
    const ratio = median(runs.map((r, i) => r / bare[i]!))
    console.log(
      `  ${variant.padEnd(9)} CPU ${perRequest(variant).toFixed(1).padStart(5)} µs/request = ${((perRequest('bare') / perRequest(variant)) * 100).toFixed(1).padStart(5)}% of bare capacity` +
        ` | ${median(runs).toFixed(0).padStart(6)} req/s median, ${(ratio * 100).toFixed(1).padStart(5)}% of bare (median of paired ratios)`,
    )
  }
  const cost = instrumentCost()
  console.log(
    `Counting one request in this process: prom-client ${cost.prom.toFixed(2)} µs, plain Maps ${cost.plain.toFixed(2)} µs` +
      ` (difference ${(cost.prom - cost.plain).toFixed(2)} µs = ${(((cost.prom - cost.plain) / perRequest('bare')) * 100).toFixed(1)}% of a bare /health's CPU)`,
  )
}
