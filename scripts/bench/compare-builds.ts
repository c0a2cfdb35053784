/**
 * Two builds against each other, at once: both serve the same benchmark store (SQLite lets two processes read one
 * file), and the same kind of traffic goes to each in turn, in short slices (the same requests in the same order for
 * each), so that the machine's swings (on this 2-core machine the same build's rate moves by a quarter from one
 * minute to the next) fall on both alike. The same build against itself: 102-103% (list pages, the mix). Reports
 * each build's rate and the server CPU a request, of its main thread (where the requests run) and of all its threads,
 * and the second's as a ratio of the first's, after a warm-up of each. The servers log beside the store.
 * Run: bun scripts/bench/compare-builds.ts BEFORE AFTER [--kind mix|search|list|node|install|versions] [--nodes 100000]
 *      [--rounds 10] [--slice 3] [--clients 8]
 * (BEFORE and AFTER: built executables, e.g. `git stash; npm run build; cp dist/registry-mirror /tmp/before`).
 */
import { parseArgs } from 'node:util'
import { join } from 'node:path'
import { runLoad, type LoadRequest } from './load'
import { activeIdsIn, benchStore, mixedTraffic, trafficOfKind } from './mixed'
import { cpuSeconds, spawnListening, waitForIndex } from './server'

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  allowPositionals: true,
  options: {
    kind: { type: 'string', default: 'mix' },
    nodes: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '10' },
    slice: { type: 'string', default: '3' },
    clients: { type: 'string', default: '8' },
  },
})
const builds = positionals.slice(0, 2)
if (builds.length !== 2) throw new Error('usage: compare-builds.ts BEFORE AFTER [--kind KIND] [--nodes N] [--rounds N] [--slice S]')
const clients = Number(values.clients)

const dir = await benchStore(Number(values.nodes))
const ids = activeIdsIn(join(dir, 'registry.db'))
/** The same requests, in the same order, for each server: one generator each, of one seed. */
const trafficFor = () =>
  values.kind === 'mix' ? mixedTraffic(ids, Number(values.nodes)) : trafficOfKind(ids, Number(values.nodes), values.kind!)

const servers: {
  build: string
  url: string
  proc: Bun.Subprocess
  next: () => LoadRequest
  main: number
  all: number
  requests: number
  seconds: number
}[] = []
try {
  for (const build of builds) {
    const { url, proc } = await spawnListening([build, 'serve', '--port', '0', '--data', dir], `${dir}-${servers.length}.log`)
    servers.push({ build, url, proc, next: trafficFor(), main: 0, all: 0, requests: 0, seconds: 0 })
    await waitForIndex(url)
  }
  for (const s of servers) await runLoad(s.url, { clients, seconds: 8, next: s.next })
  console.log(`${values.kind} traffic at ${values.nodes} nodes, ${clients} clients, ${values.rounds} rounds of ${values.slice} s each`)
  for (let round = 0; round < Number(values.rounds); round++) {
    // Each round in the other order: neither build always follows the other.
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const pid = s.proc.pid
      const [main, all] = [cpuSeconds(pid, pid), cpuSeconds(pid)]
      const run = await runLoad(s.url, { clients, seconds: Number(values.slice), next: s.next })
      s.main += cpuSeconds(pid, pid) - main
      s.all += cpuSeconds(pid) - all
      s.requests += run.requests
      s.seconds += run.requests / run.perSecond
    }
  }
  const us = (seconds: number, requests: number) => (seconds * 1e6) / requests
  for (const s of servers)
    console.log(
      `  ${s.build}: ${(s.requests / s.seconds).toFixed(0)} requests/s, main thread ${us(s.main, s.requests).toFixed(0)} µs a request, all threads ${us(s.all, s.requests).toFixed(0)} µs`,
    )
  const [before, after] = servers as [(typeof servers)[0], (typeof servers)[0]]
  console.log(
    `  the second's main thread: ${((us(after.main, after.requests) / us(before.main, before.requests)) * 100).toFixed(0)}% of the first's CPU a request`,
  )
} finally {
  for (const s of servers) s.proc.kill('SIGTERM')
  await Promise.all(servers.map((s) => s.proc.exited))
}
