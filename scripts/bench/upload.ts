/**
 * Upload benchmark: a 100 MiB archive PUT through the signed URL, against writing the same bytes with
 * Bun.write, in one run; plus the server's peak RSS growth during the upload (streaming keeps it flat), and the
 * download rate. With --database and/or --storage, the same again on PostgreSQL / S3 in the same run.
 * Run: npm run build && bun scripts/bench/upload.ts [--database postgres://... --storage s3://... --s3-endpoint URL]
 *      (S3 credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)
 */
import { fsyncSync, mkdtempSync, openSync, closeSync, rmSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeZip, samplePack } from '../../test/support/archives'
import { mib, sampleMax, startServer } from './server'

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { database: { type: 'string' }, storage: { type: 'string' }, 's3-endpoint': { type: 'string' } },
})
const backendArgs = [
  ...(values.database ? [`--database=${values.database}`] : []),
  ...(values.storage ? [`--storage=${values.storage}`] : []),
  ...(values['s3-endpoint'] ? [`--s3-endpoint=${values['s3-endpoint']}`] : []),
]
const SIZE = 100 * 1024 * 1024
const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-bench-'))
const archivePath = join(dir, 'node.zip')

const payload = new Uint8Array(SIZE)
for (let at = 0; at < SIZE; at += 65_536) crypto.getRandomValues(payload.subarray(at, at + 65_536))
await Bun.write(archivePath, makeZip(samplePack([{ name: 'weights.bin', data: payload }]), { deflate: false }))
const archive = Bun.file(archivePath)
const bytes = new Uint8Array(await archive.arrayBuffer())
// One archive per upload, differing in one small file: content-addressed storage would skip the same bytes again.
const runArchives = await Promise.all(
  [0, 1, 2].map(async (i) => {
    const path = join(dir, `node-${i}.zip`)
    await Bun.write(
      path,
      makeZip(
        samplePack([
          { name: 'weights.bin', data: payload },
          { name: `run-${i}.txt`, data: `${i}` },
        ]),
        { deflate: false },
      ),
    )
    return Bun.file(path)
  }),
)
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

/** Three uploads (and downloads) of the archive on a server with these backends; the best times and the peak RSS growth. */
async function measure(backendArgs: string[]) {
  const data = mkdtempSync(join(dir, 'data-'))
  const database = backendArgs.filter((arg) => arg.startsWith('--database='))
  const server = await startServer(data, backendArgs)
  const user = Bun.spawnSync([
    ...((await Bun.file('dist/registry-mirror').exists()) ? ['dist/registry-mirror'] : [process.execPath, 'src/main.ts']),
    ...['users', 'create', '--id', 'bench', '--email', 'b@x', '--name', 'B', '--data', data, ...database],
  ])
  const token = user.stdout.toString().trim()
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  await fetch(`${server.url}/publishers`, { method: 'POST', headers, body: JSON.stringify({ id: 'bench', name: 'Bench' }) })
  const runs: { ms: number; growth: number; firstGet: number; get: number }[] = []
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
    const put = await fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: runArchives[i] })
    const ms = performance.now() - t0
    const peak = stopSampling()
    if (put.status !== 200) throw new Error(`upload answered ${put.status}: ${await put.text()}`)
    const download = async () => {
      const t = performance.now()
      const got = await fetch(`${server.url}/archives/bench/big-pack/1.0.${i}/node.zip`)
      const length = (await got.arrayBuffer()).byteLength
      if (length !== runArchives[i]!.size || got.headers.get('content-length') !== String(length))
        throw new Error(`download: ${got.status}, ${length} bytes`)
      return performance.now() - t
    }
    const firstGet = await download() // from the bucket: fills the local copy
    runs.push({ ms, growth: peak - before, firstGet, get: await download() })
  }
  await server.stop()
  return {
    upload: Math.min(...runs.map((r) => r.ms)),
    growth: Math.max(...runs.map((r) => r.growth)),
    firstGet: Math.min(...runs.map((r) => r.firstGet)),
    get: Math.min(...runs.map((r) => r.get)),
  }
}

const disk = await measure([])
const remote = values.database || values.storage ? await measure(backendArgs) : undefined
rmSync(dir, { recursive: true, force: true })

const best = disk.upload
const growth = disk.growth
const rate = (ms: number) => (archive.size / 1024 / 1024 / (ms / 1000)).toFixed(0)
console.log(`Bun.write:          ${rate(baselineMs)} MiB/s (${baselineMs.toFixed(0)} ms, best of 3; page cache only)`)
console.log(`Bun.write + fsync:  ${rate(durableMs)} MiB/s (${durableMs.toFixed(0)} ms, best of 3)`)
console.log(`signed-URL upload:  ${rate(best)} MiB/s (${best.toFixed(0)} ms, best of 3; HTTP, SHA-256, fsync, rename, archive check)`)
console.log(
  `ratio upload / Bun.write: ${((baselineMs / best) * 100).toFixed(0)}%, / Bun.write + fsync: ${((durableMs / best) * 100).toFixed(0)}%`,
)
console.log(`server peak RSS growth during an upload: ${mib(growth)} MiB (limit 64 MiB) ${growth < 64 * 1024 * 1024 ? 'OK' : 'OVER'}`)
console.log(`download:           ${rate(disk.get)} MiB/s (${disk.get.toFixed(0)} ms, best of 3)`)
if (remote) {
  const where = [values.database && 'PostgreSQL', values.storage && 'S3'].filter(Boolean).join(' + ')
  console.log(`--- ${where} (same run) ---`)
  console.log(
    `signed-URL upload:  ${rate(remote.upload)} MiB/s (${remote.upload.toFixed(0)} ms; ${((remote.upload / disk.upload) * 100).toFixed(0)}% of the disk time)`,
  )
  console.log(
    `download, first:    ${rate(remote.firstGet)} MiB/s (${remote.firstGet.toFixed(0)} ms: from the bucket into the local copy, then sent)`,
  )
  console.log(`download, again:    ${rate(remote.get)} MiB/s (${remote.get.toFixed(0)} ms: from the local copy)`)
  console.log(`server peak RSS growth during an upload: ${mib(remote.growth)} MiB ${remote.growth < 64 * 1024 * 1024 ? 'OK' : 'OVER'}`)
}
