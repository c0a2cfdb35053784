/** The URL-signing secret of a registry kept in a data directory: `signing.key`, made by the first start (mode 0600). */
import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The file's key, '' for an empty file, undefined for none. */
function readKey(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim()
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined
    throw err
  }
}

/**
 * The key in `dir`, made if there is none. The file appears with its key or not at all: written aside, then linked
 * into place (a link fails if another process made the file first; we read theirs). It was created and then written,
 * so a first start killed in between left it empty, and every start after signed URLs with an empty key, which
 * anyone can compute: an upload URL for any version not uploaded yet. An empty file is therefore no key: it is
 * replaced (no URL signed with it may stand).
 */
export function fileSecret(dir: string): string {
  const path = join(dir, 'signing.key')
  const found = readKey(path)
  if (found) return found
  const aside = join(dir, `signing.key.${process.pid}.tmp`)
  writeFileSync(aside, randomBytes(32).toString('hex') + '\n', { mode: 0o600 })
  try {
    if (found === '') renameSync(aside, path)
    else placeOnce(aside, path)
  } finally {
    rmSync(aside, { force: true })
  }
  const key = readKey(path)
  if (!key) throw new Error(`cannot make the signing key ${path}: it stays empty`)
  return key
}

/** Links `aside` to `path` unless `path` exists; where links are not supported, writes `path` if it does not exist. */
function placeOnce(aside: string, path: string): void {
  try {
    linkSync(aside, path)
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === 'EEXIST') return // another process made it first: theirs is read
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err
    try {
      writeFileSync(path, readFileSync(aside), { mode: 0o600, flag: 'wx' })
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') throw e
    }
  }
}
