/**
 * Writes a benchmark store: the ~2,200 real node packs of test/fixtures grown to N nodes by variants
 * (1-20 versions each, OS and accelerator values, some banned or deleted), straight into SQLite. Each latest
 * version has a 50 KB archive, one of ARCHIVE_FILES distinct blobs in the store's blob directory, so that installs
 * and downloads work. The one generator of benchmark stores: every benchmark seeds through it.
 * Run: bun scripts/bench/seed-store.ts DIR [N=100000]
 */
import { Database } from 'bun:sqlite'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openStore } from '../../src/store/db'
import { fillMissingDocuments } from '../../src/services/document-fill'
import { platformKeys, repositoryKey } from '../../src/domain/platform'
import { REAL_NODES } from '../../test/support/seed'
import { picker, seededRandom } from './random'

export const OS = [
  [],
  ['OS Independent'],
  ['POSIX :: Linux'],
  ['Microsoft :: Windows'],
  ['POSIX :: Linux', 'Microsoft :: Windows', 'MacOS'],
  ['MacOS'],
]
export const ACCELERATORS = [
  [],
  [],
  ['GPU :: NVIDIA CUDA'],
  ['GPU :: NVIDIA CUDA', 'GPU :: AMD ROCm'],
  ['GPU :: Apple Metal'],
  ['NPU :: Huawei Ascend'],
  ['GPU :: Intel Arc'],
]
/** Distinct archive blobs (50 KB of random bytes each) the latest versions share, round-robin. */
export const ARCHIVE_FILES = 64
export const ARCHIVE_BYTES = 50 * 1024

/** Writes the archive blobs where the disk blob store keeps them; returns their SHA-256s. */
function writeArchiveBlobs(dir: string, random: () => number): string[] {
  return Array.from({ length: ARCHIVE_FILES }, () => {
    const bytes = new Uint8Array(ARCHIVE_BYTES)
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256)
    const sha = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
    const sub = join(dir, 'blobs', sha.slice(0, 2), sha.slice(2, 4))
    mkdirSync(sub, { recursive: true })
    writeFileSync(join(sub, sha), bytes)
    return sha
  })
}

const FLAVOURS = ['fork', 'plus', 'lite', 'pro', 'fast', 'extended', 'fixed', 'community', 'next', 'ultra', 'mini', 'turbo']

export async function seedBenchStore(dir: string, count: number): Promise<void> {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  await (await openStore(join(dir, 'registry.db'))).destroy() // the newest schema, by the migrations
  const db = new Database(join(dir, 'registry.db'))
  db.run('PRAGMA synchronous = OFF') // a throwaway bulk load
  const real = REAL_NODES
  const random = seededRandom(7)
  const pick = picker(random)
  const now = '2026-01-01T00:00:00.000Z'
  const insertPublisher = db.prepare('INSERT OR IGNORE INTO publishers (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)')
  const insertNode = db.prepare(`INSERT INTO nodes (id, normalized_id, publisher_id, name, description, author, repository, repository_key,
    supported_os_json, os_keys, supported_accelerators_json, accelerator_keys, repohost_stars, search_ranking, status,
    latest_version_id, latest_version_status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`)
  // Its count, and the copy of its ranking the list order's index holds (schema 17).
  const insertCounts = db.prepare('INSERT INTO node_downloads (node_id, search_ranking, downloads) VALUES (?, ?, ?)')
  const insertVersion = db.prepare(
    'INSERT INTO node_versions (id, node_id, version, status, host_node_extract_status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  )
  const insertHostNode = db.prepare('INSERT INTO host_nodes (version_id, name) VALUES (?, ?)')
  const insertArchive = db.prepare("INSERT INTO archives (version_id, sha256, size_bytes, format, created_at) VALUES (?, ?, ?, 'zip', ?)")
  const blobs = writeArchiveBlobs(dir, random)
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const base = real[i % real.length]!
      const k = Math.floor(i / real.length)
      const publisher = k === 0 ? base.publisher : `${base.publisher}-${k % 20}`
      insertPublisher.run(publisher, publisher, now, now)
      const id = k === 0 ? base.id : `${base.id}-${k}`
      const flavour = FLAVOURS[k % FLAVOURS.length]!
      const repository = k === 0 ? base.repository : `${base.repository}-${flavour}-${k}`
      const os = pick(OS)
      const accelerators = pick(ACCELERATORS)
      const versions = 1 + Math.floor(random() * 20)
      const latestId = crypto.randomUUID()
      const status = random() < 0.01 ? 'banned' : random() < 0.005 ? 'deleted' : 'active'
      const ranking = random() < 0.03 ? Math.floor(random() * 10) : 0
      const downloads = Math.floor(base.repohost_stars * random() * 3)
      insertNode.run(
        id,
        id.toLowerCase(),
        publisher,
        k === 0 ? base.name : `${base.name} ${flavour}`,
        k === 0 ? base.description : `${base.description} (${flavour} variant ${k})`,
        base.author,
        repository,
        repositoryKey(repository),
        JSON.stringify(os),
        platformKeys(os),
        JSON.stringify(accelerators),
        platformKeys(accelerators),
        base.repohost_stars,
        ranking,
        status,
        latestId,
        now,
        now,
      )
      insertCounts.run(id, ranking, downloads)
      for (let v = 0; v < versions; v++) {
        const latest = v === versions - 1
        insertVersion.run(latest ? latestId : crypto.randomUUID(), id, `1.${v}.0`, 'active', 'success', now, now)
      }
      insertArchive.run(latestId, blobs[i % blobs.length]!, ARCHIVE_BYTES, now)
      for (const name of base.host_nodes) insertHostNode.run(latestId, k === 0 ? name : `${name}_${k}`)
    }
    // Every entity enters the change feed, as the registry's own writes would have recorded it.
    db.run(`INSERT INTO changes (serial, kind, entity_id, changed_at)
      SELECT (SELECT last_serial FROM registry_instance) + row_number() OVER (ORDER BY k, id), kind, id, '${now}' FROM (
        SELECT 0 AS k, 'publisher' AS kind, id FROM publishers
        UNION ALL SELECT 1, 'node', id FROM nodes UNION ALL SELECT 2, 'version', id FROM node_versions)`)
    db.run('UPDATE registry_instance SET last_serial = (SELECT max(serial) FROM changes)')
  })()
  db.close()
  // Each node's rendered document, as the registry's own writes would have stored it.
  const store = await openStore(join(dir, 'registry.db'))
  await fillMissingDocuments(store)
  await store.destroy()
}

if (import.meta.main) {
  const [dir, n] = Bun.argv.slice(2)
  if (!dir) throw new Error('usage: bun scripts/bench/seed-store.ts DIR [N]')
  const started = performance.now()
  await seedBenchStore(dir, Number(n ?? 100_000))
  console.log(`seeded ${n ?? 100_000} nodes into ${dir} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
