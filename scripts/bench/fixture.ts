/**
 * CI fixture start-up: time from spawning the built binary to its first successful search, with a fixture of
 * N real node packs (default 100; 1-3 versions each, the newest with its own archive), against the same binary
 * started on an empty data directory without a fixture, in one run. Every start is fresh (a new temporary
 * data directory), as in CI. Reports medians of R runs (default 9) and their ratio.
 * Run: npm run build && bun scripts/bench/fixture.ts [--nodes N] [--runs R]
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { makeZip, samplePack } from '../../test/support/archives'
import { REAL_NODES } from '../../test/support/seed'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { nodes: { type: 'string', default: '100' }, runs: { type: 'string', default: '9' } },
})
const N = Number(values.nodes)
const RUNS = Number(values.runs)
const BIN = resolve('dist/registry-mirror')
if (!existsSync(BIN)) throw new Error('build the binary first: npm run build')

/** N nodes grown from the real packs, their publishers, one owner with a fixed token. */
function makeFixture(count: number) {
  const nodes = Array.from({ length: count }, (_, i) => {
    const real = REAL_NODES[i % REAL_NODES.length]!
    const id = i < REAL_NODES.length ? real.id : `${real.id}-${Math.floor(i / REAL_NODES.length)}`
    const versions = Array.from({ length: 1 + (i % 3) }, (_, v) => ({ version: `1.${v}.0` }))
    const newest = versions.at(-1)!
    const archive = makeZip(samplePack([{ name: 'README.md', data: `${id}\n${real.description}` }]))
    return {
      id,
      publisher: real.publisher,
      name: real.name,
      description: real.description,
      author: real.author,
      repository: real.repository,
      repohost_stars: real.repohost_stars,
      versions: [...versions.slice(0, -1), { ...newest, archive_base64: Buffer.from(archive).toString('base64') }],
    }
  })
  const publishers = [...new Set(nodes.map((n) => n.publisher))].map((id) => ({ id, members: [{ user: 'ci', role: 'owner' }] }))
  return { time: '2026-01-01T00:00:00Z', users: [{ id: 'ci', tokens: ['bench-token-000000000000000001'] }], publishers, nodes }
}

const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-bench-fixture-'))
const file = join(dir, 'fixture.json')
const fixture = makeFixture(N)
await Bun.write(file, JSON.stringify(fixture))
const fileKiB = (Bun.file(file).size / 1024).toFixed(0)
const word = fixture.nodes[0]!.name.split(/[^A-Za-z]+/).find((w) => w.length >= 4) ?? fixture.nodes[0]!.id

/** Milliseconds from spawn to the "listening" line, and to the first search that finds the first pack. */
async function startOnce(args: string[]): Promise<{ listening: number; answered: number }> {
  const t0 = performance.now()
  const proc = Bun.spawn([BIN, 'serve', '--port', '0', '--log-level', 'warn', ...args], { stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('server exited before listening')
    text += new TextDecoder().decode(value)
  }
  const listening = performance.now() - t0
  const url = text.split('\n')[0]!.replace('listening on ', '')
  const expectFound = args.includes('--fixture')
  for (;;) {
    const res = await fetch(`${url}/nodes/search?search=${encodeURIComponent(word)}`).catch(() => undefined)
    const body = res?.ok ? ((await res.json()) as { total: number }) : undefined
    if (body && (!expectFound || body.total > 0)) break
  }
  const answered = performance.now() - t0
  proc.kill('SIGTERM')
  await proc.exited
  return { listening, answered }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const runs = { fixture: [] as { listening: number; answered: number }[], empty: [] as { listening: number; answered: number }[] }
await startOnce(['--fixture', file]) // warm the file system cache once
for (let i = 0; i < RUNS; i++) {
  // Interleaved, so that a busy moment of the machine hits both alike.
  runs.fixture.push(await startOnce(['--fixture', file]))
  const empty = mkdtempSync(join(dir, 'empty-'))
  runs.empty.push(await startOnce(['--data', empty]))
  rmSync(empty, { recursive: true, force: true })
}
rmSync(dir, { recursive: true, force: true })

const ms = (x: number) => `${x.toFixed(0)} ms`
const f = { listening: median(runs.fixture.map((r) => r.listening)), answered: median(runs.fixture.map((r) => r.answered)) }
const e = { listening: median(runs.empty.map((r) => r.listening)), answered: median(runs.empty.map((r) => r.answered)) }
const versions = fixture.nodes.reduce((n, node) => n + node.versions.length, 0)
console.log(`fixture: ${N} nodes, ${versions} versions, ${N} archives, ${fixture.publishers.length} publishers (${fileKiB} KiB)`)
console.log(`median of ${RUNS} fresh starts, spawn to:   "listening"   first search answered`)
console.log(`  with the fixture                  ${ms(f.listening).padStart(9)}   ${ms(f.answered).padStart(9)}`)
console.log(`  empty, no fixture                 ${ms(e.listening).padStart(9)}   ${ms(e.answered).padStart(9)}`)
console.log(
  `  ratio                             ${(f.listening / e.listening).toFixed(2).padStart(8)}x   ${(f.answered / e.answered).toFixed(2).padStart(8)}x`,
)
