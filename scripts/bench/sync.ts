/**
 * Sync benchmark, in one run: a registry of N nodes (default 5,000, with 1-20 versions each: about 50,000
 * versions) served by one instance, mirrored (metadata only) by `registry-mirror sync` into a fresh directory.
 * Reports items per second, the ratio of the sync's time to simply fetching the same feed pages with fetch
 * (goal under 1.5x), and the time of a second, no-change run (goal under 1 s).
 * Run: npm run build && bun scripts/bench/sync.ts [--nodes N] [--fresh]
 */
import { existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { seedBenchStore } from './seed-store'
import { startServer } from './server'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { nodes: { type: 'string', default: '5000' }, fresh: { type: 'boolean' }, rounds: { type: 'string', default: '3' } },
})
const N = Number(values.nodes)
const upstreamDir = join(tmpdir(), `registry-mirror-bench-sync-${N}`)
const mirrorDir = join(tmpdir(), `registry-mirror-bench-sync-${N}-mirror`)
if (values.fresh || !existsSync(join(upstreamDir, 'registry.db'))) {
  const t0 = performance.now()
  await seedBenchStore(upstreamDir, N)
  console.log(`seeded ${N} nodes in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}

const bin = resolve('dist/registry-mirror')
const cli = existsSync(bin) ? [bin] : [process.execPath, resolve('src/main.ts')]
const server = await startServer(upstreamDir)

/** What a bare client does: every page of the feed, fetched and parsed, one after another. */
async function fetchAll(): Promise<{ ms: number; pages: number; items: number }> {
  const t0 = performance.now()
  let since = 0
  let pages = 0
  let items = 0
  for (;;) {
    const page = (await (await fetch(`${server.url}/changes?since=${since}&limit=1000`)).json()) as {
      changes: unknown[]
      next: number
      head: number
    }
    pages++
    items += page.changes.length
    if (!page.changes.length || page.next >= page.head) break
    since = page.next
  }
  return { ms: performance.now() - t0, pages, items }
}

async function syncOnce(): Promise<{ ms: number; runMs: number; cpuMs: number; line: string }> {
  const t0 = performance.now()
  const proc = Bun.spawn([...cli, 'sync', '--from', server.url, '--data', mirrorDir], { stdout: 'pipe', stderr: 'inherit' })
  const line = (await new Response(proc.stdout).text()).trim()
  if ((await proc.exited) !== 0) throw new Error(`sync failed: ${line}`)
  const ms = performance.now() - t0
  // The run itself, as the summary line reports it (without process start, store creation and the final checkpoint).
  const runMs = Number(/; ([\d.]+) s$/.exec(line)?.[1] ?? NaN) * 1000
  return { ms, runMs, cpuMs: Number(proc.resourceUsage()?.cpuTime.total ?? 0) / 1000, line }
}

try {
  await fetchAll() // warms the server's caches and the page cache, for both contenders alike
  const rounds = Number(values.rounds)
  const fetches: number[] = []
  const syncs: number[] = []
  const runs: number[] = []
  const cpu: number[] = []
  const again: number[] = []
  let items = 0
  let pages = 0
  let firstLine = ''
  for (let r = 0; r < rounds; r++) {
    const f = await fetchAll()
    fetches.push(f.ms)
    items = f.items
    pages = f.pages
    rmSync(mirrorDir, { recursive: true, force: true })
    const s = await syncOnce()
    syncs.push(s.ms)
    runs.push(s.runMs)
    cpu.push(s.cpuMs)
    firstLine = s.line
    const second = await syncOnce()
    if (!second.line.includes('0 publishers, 0 nodes, 0 versions changed')) throw new Error(`second run changed something: ${second.line}`)
    again.push(second.ms)
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const fetchMs = median(fetches)
  const syncMs = median(syncs)
  console.log(firstLine)
  console.log(`feed: ${items} items in ${pages} pages of 1,000`)
  const runMs = median(runs)
  console.log(
    `fetch only: ${(fetchMs / 1000).toFixed(2)} s; sync: ${(syncMs / 1000).toFixed(2)} s from process start to exit, ` +
      `${(runMs / 1000).toFixed(2)} s for the run itself, ${(median(cpu) / 1000).toFixed(2)} s of CPU`,
  )
  console.log(
    `sync: ${Math.round(items / (syncMs / 1000)).toLocaleString('en-US')} items/s; ratio sync / fetch: ${(syncMs / fetchMs).toFixed(2)}x ` +
      `(the run alone: ${(runMs / fetchMs).toFixed(2)}x; goal < 1.5x)`,
  )
  console.log(`no-change second run: ${(median(again) / 1000).toFixed(2)} s (goal < 1 s), medians of ${rounds} rounds`)
} finally {
  await server.stop()
  rmSync(mirrorDir, { recursive: true, force: true })
}
