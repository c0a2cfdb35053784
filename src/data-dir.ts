/** The data directory holds emails, token hashes and the signing key: only its owner may read it. */
import { chmodSync, mkdirSync } from 'node:fs'

/** Creates the directory (0700), tightens one made by an older release, and makes every file created from now on 0600. */
export function prepareDataDir(dir: string): string {
  process.umask(0o077)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  return dir
}
