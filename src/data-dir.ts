/** The data directory holds emails, token hashes and the signing key: only its owner may read it. */
import { chmodSync, mkdirSync } from 'node:fs'

/** The data directory cannot be made or used (a file in its place, no permission): one line for the operator. */
export class DataDirError extends Error {}

/** Creates the directory (0700), tightens one made by an older release, and makes every file created from now on 0600. */
export function prepareDataDir(dir: string): string {
  process.umask(0o077)
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    chmodSync(dir, 0o700)
  } catch (err) {
    throw new DataDirError(`cannot use ${dir} as the data directory: ${(err as Error).message}`)
  }
  return dir
}
