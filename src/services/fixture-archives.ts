/**
 * The inline archives of a fixture: decoded, each distinct content staged in the blob store once and inspected
 * as an upload is (unsafe paths, links, limits; host nodes extracted), before any row is written.
 */
import { inspectArchive, type Inspection } from '../archive/inspect'
import type { StagedBlob } from '../blobs/blob-store'
import type { Fixture } from '../domain/fixture'
import type { Deps } from './deps'
import type { FixtureProblem } from './fixture-parse'

export interface FixtureArchive {
  sha256: string
  size: number
  inspection: Inspection
}

export interface FixtureArchives {
  /** The staged archive of `nodes[node].versions[version]`, when it has one not already stored. */
  of(node: number, version: number): FixtureArchive | undefined
  problems: FixtureProblem[]
  /** The SHA-256 of every staged archive. */
  hashes: string[]
  /** Makes every staged archive durable and visible; call once the rows pointing at them are sure to be written. */
  commit(): Promise<void>
  discard(): Promise<void>
}

/** Archives staged at once: each is written and fsynced, and fsyncs in parallel share the disk's flushes. */
const PARALLEL = 16

async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await work(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker))
}

/**
 * `stored(node, version)` is the SHA-256 of the archive the store already holds for that version, if any: the
 * same bytes are skipped (loading again changes nothing), other bytes are a problem (archives are immutable).
 */
export async function prepareArchives(
  deps: Deps,
  fixture: Fixture,
  stored: (node: number, version: number) => string | undefined,
): Promise<FixtureArchives> {
  const problems: FixtureProblem[] = []
  const max = deps.settings.maxUploadBytes
  const wanted = new Map<string, { bytes: Uint8Array; uses: { node: number; version: number; path: string }[] }>()
  fixture.nodes?.forEach((n, i) =>
    n.versions?.forEach((ver, j) => {
      if (ver.archive_base64 === undefined) return
      const path = `nodes[${i}].versions[${j}].archive_base64`
      const bytes = Buffer.from(ver.archive_base64, 'base64')
      if (bytes.byteLength > max) return problems.push({ path, message: `archive is larger than the limit of ${max} bytes` })
      const sha256 = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
      const existing = stored(i, j)
      if (existing === sha256) return
      if (existing) {
        return problems.push({ path, message: `differs from the archive already stored for this version (sha256 ${existing})` })
      }
      const entry = wanted.get(sha256) ?? { bytes, uses: [] as { node: number; version: number; path: string }[] }
      entry.uses.push({ node: i, version: j, path })
      wanted.set(sha256, entry)
    }),
  )

  const staged = new Map<string, StagedBlob>()
  const inspections = new Map<string, Inspection>()
  const discard = () => inParallel([...staged.values()], (blob) => blob.discard())
  try {
    await inParallel([...wanted.keys()], async (sha256) => {
      const blob = await deps.blobs.stage(new Blob([wanted.get(sha256)!.bytes]).stream(), max)
      staged.set(sha256, blob)
      inspections.set(sha256, await inspectArchive(blob.localPath, deps.settings.archiveLimits))
    })
  } catch (err) {
    await discard()
    throw err
  }

  const byVersion = new Map<string, FixtureArchive>()
  for (const [sha256, { uses }] of wanted) {
    const size = staged.get(sha256)!.size
    const inspection = inspections.get(sha256)!
    for (const use of uses) {
      const declared = fixture.nodes![use.node]!.versions![use.version]!.status
      if (!inspection.ok && declared !== 'flagged') {
        problems.push({ path: use.path, message: `invalid archive: ${inspection.reason} (declare "status": "flagged" to load it anyway)` })
      }
      byVersion.set(`${use.node}/${use.version}`, { sha256, size, inspection })
    }
  }
  return {
    of: (node, version) => byVersion.get(`${node}/${version}`),
    problems,
    hashes: [...staged.keys()],
    commit: () => inParallel([...staged.values()], (blob) => blob.commit()),
    discard,
  }
}
