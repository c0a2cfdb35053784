/**
 * A walk of the whole list order, as a list without a keyword makes it (the query cache holds its answer until the
 * next count flush, about a second, so at 100,000 nodes the mix walks once a second for each distinct set of filters
 * asked: some 20 a second). A catalogue of `--nodes` nodes with the benchmark store's platforms, 1% banned, in
 * download order; for each set of filters, in turns: the plan's `collect` (what the index runs: the facts kept by
 * position, read in sequence), the test made slot by slot through `keep()` (how it was done before), and a copy of
 * the order into an array of its length (the least a walk does; the yardstick).
 * Run: bun scripts/bench/order-walk.ts [--nodes 100000] [--rounds 5]
 */
import { parseArgs } from 'node:util'
import { platformKeys } from '../../src/domain/platform'
import type { NodeQuery } from '../../src/domain/node-query'
import { Catalog } from '../../src/search/catalog'
import type { Plan } from '../../src/search/catalog-facts'
import { searchDoc } from '../../test/support/search-doc'
import { picker, seededRandom } from './random'
import { ACCELERATORS, OS } from './seed-store'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { nodes: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '5' } },
})
const N = Number(values.nodes)
const ROUNDS = Number(values.rounds)

const random = seededRandom(3)
const pick = picker(random)
const catalog = new Catalog()
for (let i = 0; i < N; i++) {
  const doc = searchDoc({
    id: `node-${i}`,
    name: `Node ${i}`,
    status: random() < 0.01 ? 'banned' : 'active',
    osKeys: platformKeys(pick(OS)),
    acceleratorKeys: platformKeys(pick(ACCELERATORS)),
    downloads: Math.floor(random() * 10_000),
    updatedAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(random() * 300) * 86_400_000).toISOString(),
  })
  catalog.upsert(doc, true)
}
catalog.finishLoad()
const order = catalog.ordered()

const FILTERS: [name: string, q: Partial<NodeQuery>][] = [
  ['none (banned left out)', {}],
  ['OS', { os: 'POSIX :: Linux' }],
  ['OS and accelerator', { os: 'MacOS', accelerator: 'GPU' }],
  ['changed since', { changedSince: '2026-06-01T00:00:00.000Z' }],
]

/** Each way, as inListOrder calls it: an array of the order's length, the passing slots written, copied to size. */
const WAYS: Record<string, (plan: Plan) => Int32Array> = {
  collect(plan) {
    const out = new Int32Array(order.length)
    return out.slice(0, plan.collect(out, 0))
  },
  'keep() each'(plan) {
    const out = new Int32Array(order.length)
    let n = 0
    for (let i = 0; i < order.length; i++) {
      const slot = order[i]!
      if ((!plan.candidates || plan.candidates.has(slot)) && plan.keep(slot)) out[n++] = slot
    }
    return out.slice(0, n)
  },
  'a copy of the order'() {
    const out = new Int32Array(order.length)
    for (let i = 0; i < order.length; i++) out[i] = order[i]!
    return out.slice(0, order.length)
  },
}

const WALKS = 40
console.log(`the order of ${N.toLocaleString('en')} nodes walked, µs a walk (best of ${ROUNDS} rounds of ${WALKS})`)
for (const [name, q] of FILTERS) {
  const plan = catalog.plan({ includeBanned: false, offset: 0, limit: 10, ...q })
  const best = new Map<string, number>()
  let kept = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (const [way, walk] of Object.entries(WAYS)) {
      const t0 = performance.now()
      for (let i = 0; i < WALKS; i++) kept = way === 'collect' ? walk(plan).length : (walk(plan), kept)
      const us = ((performance.now() - t0) / WALKS) * 1000
      best.set(way, Math.min(best.get(way) ?? Infinity, us))
    }
  }
  const copy = best.get('a copy of the order')!
  const cells = [...best].map(([way, us]) => `${way} ${us.toFixed(0)} (${(us / copy).toFixed(1)}x)`)
  console.log(`  ${name.padEnd(24)} ${kept.toLocaleString('en').padStart(7)} kept: ${cells.join(', ')}`)
}
