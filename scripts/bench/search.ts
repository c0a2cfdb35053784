/**
 * Search benchmark on a store of N nodes grown from the real packs (default 100,000), every figure from one run,
 * the server logging at its default level (info: a line per request) into a file, 8 clients unless said:
 * 1. quiet start: time until `serve` answers, until the index is complete, and resident memory then;
 * 2. distinct queries (none repeated, from a generator that does not cycle) under 8 clients: p50/p99, queries/s;
 * 3. repeating traffic (a manager's crawl over the whole catalogue, search-as-you-type over many words) as a
 *    ratio of GET /health under the same clients;
 * 4. warm-up under traffic: a restart with one distinct-query client and one /health client running from
 *    `listening` until the index is complete: their p99, and the index's time against the quiet start's;
 * 5. write burst: 1,000 publishes (with their archive upload) while one client runs distinct queries: the
 *    client's p99 against the same client quiet, and publishes/s against publishing alone.
 * With --database (an empty PostgreSQL database; the store is copied into it once, as copy-store moves a
 * registry), every phase runs against a server on PostgreSQL.
 * Run: npm run build && bun scripts/bench/search.ts [--nodes N] [--fresh] [--publishes 1000] [--phases 12345]
 *      [--database postgres://...]
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { copyStore } from '../../src/store/copy'
import { openStore } from '../../src/store/db'
import { makeZip, samplePack } from '../../test/support/archives'
import { REAL_NODES } from '../../test/support/seed'
import { healthRate, loadAverage, ms, pct, quantile, runLoad } from './load'
import { benchStore } from './mixed'
import { distinctSearches } from './queries'
import { mib, startServer, waitForIndex, type BenchServer } from './server'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    nodes: { type: 'string', default: '100000' },
    fresh: { type: 'boolean' },
    publishes: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    phases: { type: 'string', default: '12345' },
    database: { type: 'string' },
  },
})
const N = Number(values.nodes)
const PUBLISHES = Number(values.publishes)
const SECONDS = Number(values.seconds)
const CLIENTS = 8
const phases = values.phases!
const dir = await benchStore(N, values.fresh)
if (values.database) await copyOnce(join(dir, 'registry.db'), values.database)
const searchPath = (q: string) => `/nodes/search?${q}`
console.log(`search benchmark: ${N} nodes, ${CLIENTS} clients, default log level; load average ${loadAverage()}`)

/** Every phase on a server with these backends (SQLite and disk, or `--database`). */
async function measure(label: string, serverArgs: string[]) {
  console.log(`\n== ${label}`)
  // 1. Quiet start.
  let t0 = performance.now()
  let server = await startServer(dir, serverArgs)
  // A phase that fails must not leave its server running.
  try {
    while (
      !(await fetch(`${server.url}/health`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      await Bun.sleep(2)
    const answersMs = performance.now() - t0
    await waitForIndex(server.url)
    const quietIndexMs = performance.now() - t0
    await Bun.sleep(500)
    const rssReady = server.rssBytes()
    console.log(`\n1. quiet start (load average ${loadAverage()})`)
    console.log(`   answers requests after ${ms(answersMs)}; index complete after ${ms(quietIndexMs)}; RSS then ${mib(rssReady)} MiB`)

    const distinct = distinctSearches(11)
    if (phases.includes('2')) {
      // 2. Distinct queries under 8 clients.
      await runLoad(server.url, { clients: CLIENTS, seconds: 1, next: () => ({ path: searchPath(distinct()) }) })
      const queryLoad = loadAverage()
      const queries = await runLoad(server.url, { clients: CLIENTS, seconds: SECONDS, next: () => ({ path: searchPath(distinct()) }) })
      console.log(`\n2. distinct queries, ${CLIENTS} clients (load average ${queryLoad})`)
      console.log(
        `   ${queries.requests} queries, ${queries.perSecond.toFixed(0)}/s, p50 ${ms(quantile(queries.latencies, 0.5))}, ` +
          `p99 ${ms(quantile(queries.latencies, 0.99))}, failures ${queries.failures}`,
      )
    }
    if (phases.includes('3')) {
      // 3. Repeating traffic: the crawl walks every page of the catalogue, search-as-you-type types many words.
      const pages = Math.ceil(N / 30)
      const typed = [...new Set(REAL_NODES.flatMap((n) => n.name.toLowerCase().split(/[^a-z0-9]+/)).filter((w) => w.length >= 4))]
        .slice(0, 300)
        .flatMap((w) => Array.from({ length: w.length - 1 }, (_, i) => w.slice(0, i + 2)))
      let crawled = 0
      let typedAt = 0
      const repeatingNext = (_c: number, i: number) =>
        i % 2
          ? { path: `/nodes?page=${(crawled++ % pages) + 1}&limit=30` }
          : { path: `/nodes/search?search=${typed[typedAt++ % typed.length]}&limit=10` }
      await runLoad(server.url, { clients: CLIENTS, seconds: 2, next: repeatingNext })
      const health = await healthRate(server.url, CLIENTS, SECONDS / 2)
      const repeating = await runLoad(server.url, { clients: CLIENTS, seconds: SECONDS / 2, next: repeatingNext })
      console.log(`\n3. repeating traffic (load average ${loadAverage()})`)
      console.log(
        `   GET /health ${health.toFixed(0)} req/s; crawl of ${pages} pages + search-as-you-type over ${typed.length} prefixes: ` +
          `${repeating.perSecond.toFixed(0)} req/s = ${pct(repeating.perSecond / health)} of /health, p99 ${ms(quantile(repeating.latencies, 0.99))}`,
      )
    }
    const rssAfter = server.rssBytes()
    if (phases.includes('4')) {
      await server.stop()

      // 4. Warm-up under traffic: from `listening`, one distinct-query client and one /health client.
      t0 = performance.now()
      server = await startServer(dir, serverArgs)
      const warmLoad = loadAverage()
      let warming = true
      const indexDone = waitForIndex(server.url).then(() => {
        warming = false
        return performance.now() - t0
      })
      const during = { health: [] as number[], reads: [] as number[], failures: 0 }
      const client = async (kind: 'health' | 'reads') => {
        while (warming) {
          const start = performance.now()
          const res = await fetch(server.url + (kind === 'health' ? '/health' : searchPath(distinct())))
          await res.arrayBuffer()
          if (!res.ok) during.failures++
          during[kind].push(performance.now() - start)
        }
      }
      const [warmIndexMs] = await Promise.all([indexDone, client('health'), client('reads')])
      for (const list of [during.health, during.reads]) list.sort((a, b) => a - b)
      console.log(`\n4. warm-up under traffic (load average ${warmLoad} at the restart)`)
      console.log(
        `   index complete after ${ms(warmIndexMs)} = ${(warmIndexMs / quietIndexMs).toFixed(2)}x its quiet time (goal <= 1.5x); ` +
          `/health p99 ${ms(quantile(during.health, 0.99))} over ${during.health.length} (goal < 50 ms); ` +
          `reads p99 ${ms(quantile(during.reads, 0.99))} over ${during.reads.length} (goal < 250 ms); failures ${during.failures}`,
      )
    }
    if (phases.includes('5')) {
      // 5. Write burst: publishes with their upload, while one client runs distinct queries.
      const token = benchUser(dir, serverArgs)
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
      const run = Date.now().toString(36) // the store is kept between runs: new names each time
      const publisher = `burst-${run}`
      const made = await fetch(`${server.url}/publishers`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ id: publisher, name: 'Burst' }),
      })
      if (made.status !== 201) throw new Error(`creating the publisher answered ${made.status}: ${await made.text()}`)
      const archive = makeZip(samplePack())
      let published = 0
      async function publishOne(): Promise<void> {
        const id = `${publisher}-node-${published++}`
        const res = await fetch(`${server.url}/publishers/${publisher}/nodes/${id}/versions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ node: { id, description: `write burst ${id}` }, node_version: { version: '1.0.0' } }),
        })
        if (res.status !== 201) throw new Error(`publish answered ${res.status}: ${await res.text()}`)
        const { signedUrl } = (await res.json()) as { signedUrl: string }
        const put = await fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: archive })
        if (put.status !== 200) throw new Error(`upload answered ${put.status}: ${await put.text()}`)
      }
      async function publishBurst(count: number): Promise<number> {
        const start = performance.now()
        for (let i = 0; i < count; i++) await publishOne()
        return count / ((performance.now() - start) / 1000)
      }
      const alone = await publishBurst(Math.min(200, PUBLISHES))
      const quiet = await runLoad(server.url, { clients: 1, seconds: SECONDS / 2, next: () => ({ path: searchPath(distinct()) }) })
      let writing = true
      const burstLoad = loadAverage()
      const [burstRate, busy] = await Promise.all([
        publishBurst(PUBLISHES).finally(() => (writing = false)),
        runLoad(server.url, { clients: 1, seconds: 3600, next: () => (writing ? { path: searchPath(distinct()) } : undefined) }),
      ])
      console.log(`\n5. write burst (load average ${burstLoad})`)
      console.log(
        `   publishing alone ${alone.toFixed(0)}/s; ${PUBLISHES} publishes beside one search client: ${burstRate.toFixed(0)}/s. ` +
          `Search p99 quiet ${ms(quantile(quiet.latencies, 0.99))}, during the writes ${ms(quantile(busy.latencies, 0.99))} = ` +
          `${(quantile(busy.latencies, 0.99) / quantile(quiet.latencies, 0.99)).toFixed(2)}x (goal < 2x); failures ${busy.failures}`,
      )
    }
    console.log(`\nRSS: ${mib(rssReady)} MiB when the index was complete, ${mib(rssAfter)} MiB after traffic (store ${dir})`)
  } finally {
    await server.stop()
  }
}

await measure('SQLite, disk', [])
if (values.database) await measure('PostgreSQL', [`--database=${values.database}`])

/** A new user's token, made in the store the server runs on (its `--database`, else the data directory's). */
function benchUser(data: string, serverArgs: string[]): string {
  const bin = existsSync('dist/registry-mirror') ? ['dist/registry-mirror'] : [process.execPath, 'src/main.ts']
  const id = `bench-${Date.now()}`
  const database = serverArgs.find((arg) => arg.startsWith('--database='))
  const store = database ? [database] : ['--data', data]
  const made = Bun.spawnSync([...bin, 'users', 'create', '--id', id, '--email', `${id}@x`, '--name', 'Bench', ...store])
  if (made.exitCode !== 0) throw new Error(`users create: ${made.stderr.toString()}`)
  return made.stdout.toString().trim()
}

/** The store on PostgreSQL (an empty database), copied once as copy-store moves a registry. */
async function copyOnce(sqlitePath: string, database: string) {
  const [from, to] = [await openStore(sqlitePath), await openStore(database)]
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
