/** Takes an exported bundle apart and puts it back together changed (rows, archives, manifest), for hostile-bundle tests. */
import { readFileSync, writeFileSync } from 'node:fs'
import tar from 'tar-stream'
import type { BundleManifest } from '../../src/domain/bundle'
import { makeTar, type TarEntrySpec } from './archives'

export interface BundleParts {
  /** Each rows chunk, as its entries. */
  rows: Record<string, unknown>[][]
  /** Archive bytes by SHA-256. */
  archives: Map<string, Uint8Array>
  manifest: BundleManifest
}

export const sha256 = (bytes: Uint8Array | string) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
const ndjson = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n'

export async function readBundle(file: string): Promise<BundleParts> {
  const extract = tar.extract()
  extract.end(readFileSync(file))
  const parts: BundleParts = { rows: [], archives: new Map(), manifest: undefined as unknown as BundleManifest }
  for await (const entry of extract) {
    const chunks: Uint8Array[] = []
    for await (const chunk of entry as AsyncIterable<Uint8Array>) chunks.push(chunk)
    const bytes = Buffer.concat(chunks)
    const name = entry.header.name
    if (name === 'manifest.json') parts.manifest = JSON.parse(bytes.toString())
    else if (name.startsWith('rows/'))
      parts.rows.push(
        bytes
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      )
    else parts.archives.set(name.slice('archives/'.length), new Uint8Array(bytes))
  }
  return parts
}

/**
 * The members of a bundle from its parts, the manifest listing them with their hashes (`manifest` overrides its
 * fields); `extra` members go before the manifest, `raw` rows chunks are written as they are.
 */
export function bundleMembers(
  parts: BundleParts,
  opts: { manifest?: Partial<BundleManifest>; extra?: TarEntrySpec[]; raw?: Record<number, string> } = {},
): TarEntrySpec[] {
  const rows = parts.rows.map((chunk, i) => ({
    name: `rows/${String(i).padStart(6, '0')}.ndjson`,
    data: opts.raw?.[i] ?? ndjson(chunk),
    changes: chunk.length,
  }))
  const archives = [...parts.archives].map(([sha, data]) => ({ name: `archives/${sha}`, data, sha, size: data.byteLength }))
  const manifest: BundleManifest = {
    ...parts.manifest,
    rows: rows.map((r) => ({ name: r.name, sha256: sha256(r.data), changes: r.changes })),
    archives: archives.map((a) => ({ sha256: a.sha, size: a.size })),
    ...opts.manifest,
  }
  return [...rows, ...archives, ...(opts.extra ?? []), { name: 'manifest.json', data: JSON.stringify(manifest) }]
}

export function writeBundle(file: string, members: TarEntrySpec[]): string {
  writeFileSync(file, makeTar(members))
  return file
}
