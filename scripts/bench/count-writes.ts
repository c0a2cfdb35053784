/**
 * The download writer's cost per counted node, in a loop: batches of `--nodes` distinct nodes drawn at random (a
 * second's flush of installs at 100,000 nodes counts some 2,850), each written as the server writes it
 * (`writeDownloadCounts` on a connection of its own) and then checkpointed, as the checkpoint thread would. Writes to
 * the store it is given: run it on a copy.
 * Run: bun scripts/bench/count-writes.ts /tmp/copy/registry.db [--nodes 2850] [--batches 12]
 */
import { Database } from 'bun:sqlite'
import { parseArgs } from 'node:util'
import { openStoreWriter } from '../../src/store/db'
import { writeDownloadCounts } from '../../src/store/download-counts'
import { activeIdsIn } from './mixed'
import { picker, seededRandom } from './random'

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  allowPositionals: true,
  options: { nodes: { type: 'string', default: '2850' }, batches: { type: 'string', default: '12' } },
})
const path = positionals[0]
if (!path) throw new Error('usage: count-writes.ts STORE_FILE [--nodes N] [--batches N]')
const perBatch = Number(values.nodes)
const batches = Number(values.batches)

const ids = activeIdsIn(path)
const pick = picker(seededRandom(11))
const db = openStoreWriter(path, { autocheckpointPages: 0 })
const checkpointer = new Database(path)
let write = 0
let checkpoint = 0
let counted = 0
for (let b = 0; b < batches; b++) {
  const counts = new Map<string, number>()
  while (counts.size < perBatch) counts.set(pick(ids), 1)
  const t0 = performance.now()
  await writeDownloadCounts(db, counts, new Date().toISOString())
  const t1 = performance.now()
  checkpointer.run('pragma wal_checkpoint(truncate)')
  const t2 = performance.now()
  // The first two warm the caches and the statements.
  if (b < 2) continue
  write += t1 - t0
  checkpoint += t2 - t1
  counted += counts.size
}
await db.destroy()
checkpointer.close()
const us = (ms: number) => `${((ms * 1000) / counted).toFixed(1)} µs`
console.log(`${counted} nodes counted in ${batches - 2} batches: writing ${us(write)} a node, checkpointing ${us(checkpoint)}`)
