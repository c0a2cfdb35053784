/**
 * Temporary files named after the process that writes them (staging and probe files in data/tmp, partial copies in
 * the blob cache), so that another process on the same directory, or a later start, removes only what no live
 * process is still writing: a dead process's files at once, any other once it was last written an hour ago or more.
 */
import { newId } from '../domain/ids'

/**
 * This process among all that had its pid: in a container the server is often pid 1 at every start, so a pid alone
 * took the leftovers of the killed one before it for this process's own, and kept them for the hour.
 */
const INCARNATION = newId().slice(0, 8)
/** What the names of this process's temporary files start with: its pid and its incarnation. */
export const OWNER = `${process.pid}-p${INCARNATION}-`

/** Whether the process that wrote this file (its name starts with its pid, then its incarnation) has ended. */
export function ownerIsGone(name: string): boolean {
  const [, pidText, incarnation] = /^(\d+)-(?:p([0-9a-f]{8})-)?/.exec(name) ?? []
  const pid = Number(pidText)
  if (!pid) return false
  // Our pid: ours if it is our incarnation (or one named before incarnations, which the hour's sweep takes).
  if (pid === process.pid) return incarnation !== undefined && incarnation !== INCARNATION
  try {
    process.kill(pid, 0)
    return false
  } catch (err) {
    return (err as { code?: string }).code === 'ESRCH'
  }
}

/** Whether a temporary file may be removed: its process ended, or nothing was written to it for `maxAgeMs`. */
export function isAbandoned(name: string, modifiedMs: number, maxAgeMs: number, now = Date.now()): boolean {
  return now - modifiedMs > maxAgeMs || ownerIsGone(name)
}
