/** The data directory holds emails, token hashes and the signing key: only its owner may read it. */
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

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

/**
 * The store file of a data directory that must hold a registry already (a command that reads one, or changes what is
 * in it): a mistyped --data is said, rather than answered from a new, empty store made there.
 */
export function existingStoreFile(dir: string): string {
  const path = join(dir, 'registry.db')
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new DataDirError(`cannot use ${dir} as the data directory: it is not a directory`)
  if (!existsSync(path))
    throw new DataDirError(`no registry in ${dir}: it has no registry.db (is --data right? "serve" or "users create" makes one)`)
  return path
}

/**
 * On disk, an upload is staged in tmp/ and moved into blobs/ by a rename, which cannot cross file systems: with blobs/
 * put on another one (a mount, a symlink), every upload failed with EXDEV, a 500. Said at start instead, with the way
 * out.
 */
export function checkBlobsBesideTmp(dir: string): void {
  const blobs = join(dir, 'blobs')
  const tmp = join(dir, 'tmp')
  if (statSync(blobs).dev === statSync(tmp).dev) return
  throw new DataDirError(
    `${blobs} and ${tmp} are on different file systems: uploads are moved from one to the other by a rename, which ` +
      'cannot cross them; make tmp a symlink to a directory on the file system of blobs',
  )
}
