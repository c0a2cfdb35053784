/**
 * Upload benchmark: a 100 MiB archive PUT through the signed URL, against writing the same bytes with
 * Bun.write, in one run; plus the server's peak RSS growth during the upload (streaming keeps it flat).
 * Run: npm run build && bun scripts/bench/upload.ts
 */
import { fsyncSync, mkdtempSync, openSync, closeSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeZip, samplePack } from '../../test/support/archives'
import { mib, sampleMax, startServer } from './server'

const SIZE = 100 * 1024 * 1024
const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-bench-'))
const archivePath = join(dir, 'node.zip')

const payload = new Uint8Array(SIZE)
for (let at = 0; at < SIZE; at += 65_536) crypto.getRandomValues(payload.subarray(at, at + 65_536))
await Bun.write(archivePath, makeZip(samplePack([{ name: 'weights.bin', data: payload }]), { deflate: false }))
const archive = Bun.file(archivePath)
const bytes = new Uint8Array(await archive.arrayBuffer())
console.log(`archive: ${mib(archive.size)} MiB (stored zip)`)

// Baselines: the same bytes written by Bun.write in this process, as is and made durable with fsync
// (the upload fsyncs before it answers).
const baselineRuns: number[] = []
const durableRuns: number[] = []
for (let i = 0; i < 3; i++) {
  const path = join(dir, `copy-${i}`)
  const t0 = performance.now()
  await Bun.write(path, bytes)
  baselineRuns.push(performance.now() - t0)
  const fd = openSync(path, 'r+')
  fsyncSync(fd)
  closeSync(fd)
  durableRuns.push(performance.now() - t0)
}
const baselineMs = Math.min(...baselineRuns)
const durableMs = Math.min(...durableRuns)

const server = await startServer(join(dir, 'data'))
const user = Bun.spawnSync([
  ...((await Bun.file('dist/registry-mirror').exists()) ? ['dist/registry-mirror'] : [process.execPath, 'src/main.ts']),
  'users',
  'create',
  '--id',
  'bench',
  '--email',
  'b@x',
  '--name',
  'B',
  '--data',
  join(dir, 'data'),
])
const token = user.stdout.toString().trim()
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
await fetch(`${server.url}/publishers`, { method: 'POST', headers, body: JSON.stringify({ id: 'bench', name: 'Bench' }) })

const uploadRuns: { ms: number; growth: number }[] = []
for (let i = 0; i < 3; i++) {
  const res = await fetch(`${server.url}/publishers/bench/nodes/big-pack/versions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ node_version: { version: `1.0.${i}` } }),
  })
  const { signedUrl } = (await res.json()) as { signedUrl: string }
  Bun.gc(true)
  const before = server.rssBytes()
  const stopSampling = sampleMax(server.rssBytes)
  const t0 = performance.now()
  const put = await fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: archive })
  const ms = performance.now() - t0
  const peak = stopSampling()
  if (put.status !== 200) throw new Error(`upload answered ${put.status}: ${await put.text()}`)
  uploadRuns.push({ ms, growth: peak - before })
}
await server.stop()
rmSync(dir, { recursive: true, force: true })

const best = Math.min(...uploadRuns.map((r) => r.ms))
const growth = Math.max(...uploadRuns.map((r) => r.growth))
const rate = (ms: number) => (archive.size / 1024 / 1024 / (ms / 1000)).toFixed(0)
console.log(`Bun.write:          ${rate(baselineMs)} MiB/s (${baselineMs.toFixed(0)} ms, best of 3; page cache only)`)
console.log(`Bun.write + fsync:  ${rate(durableMs)} MiB/s (${durableMs.toFixed(0)} ms, best of 3)`)
console.log(`signed-URL upload:  ${rate(best)} MiB/s (${best.toFixed(0)} ms, best of 3; HTTP, SHA-256, fsync, rename, archive check)`)
console.log(
  `ratio upload / Bun.write: ${((baselineMs / best) * 100).toFixed(0)}%, / Bun.write + fsync: ${((durableMs / best) * 100).toFixed(0)}%`,
)
console.log(`server peak RSS growth during an upload: ${mib(growth)} MiB (limit 64 MiB) ${growth < 64 * 1024 * 1024 ? 'OK' : 'OVER'}`)
