/**
 * The air-gap bundle: one tar holding the feed's rows (NDJSON, in serial order, in chunks) and the archives by
 * SHA-256, with a manifest last that lists every member with its SHA-256. `since` 0 is a whole snapshot; more
 * is the changes after that serial of the exporting registry (`instance`).
 */
import * as v from 'valibot'

export const BUNDLE_FORMAT = 'registry-mirror-bundle'
export const BUNDLE_VERSION = 1
export const MANIFEST_NAME = 'manifest.json'
export const rowsName = (i: number) => `rows/${String(i).padStart(6, '0')}.ndjson`
export const archiveName = (sha256: string) => `archives/${sha256}`

const Sha256 = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))
const Serial = v.pipe(v.number(), v.safeInteger(), v.minValue(0))

export const BundleManifestSchema = v.object({
  format: v.literal(BUNDLE_FORMAT),
  version: v.literal(BUNDLE_VERSION),
  instance: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  since: Serial,
  until: Serial,
  created_at: v.string(),
  rows: v.array(v.object({ name: v.string(), sha256: Sha256, changes: Serial })),
  archives: v.array(v.object({ sha256: Sha256, size: Serial })),
})

export type BundleManifest = v.InferOutput<typeof BundleManifestSchema>
