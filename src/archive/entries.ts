/** What the archive readers report, the limits they enforce, and the problems that make an archive invalid. */

/** The only kinds an archive may hold; readers refuse every other kind (links, devices, FIFOs, unknown). */
export type EntryKind = 'file' | 'dir'

export interface ArchiveEntry {
  name: string
  size: number
  kind: EntryKind
}

export interface EntryVisitor {
  /** Whether the reader should hand over this entry's bytes. */
  wants(entry: ArchiveEntry): boolean
  visit(entry: ArchiveEntry, content?: Uint8Array): void
}

export interface ArchiveLimits {
  maxEntries: number
  /** Sum of the uncompressed sizes of all entries. */
  maxTotalBytes: number
  /** Largest single entry whose bytes are read (Python sources). */
  maxReadBytes: number
  /** Wall-clock budget of one inspection, in milliseconds (default 10 s). */
  timeBudgetMs?: number
  /** Bytes one inspection may read from disk plus decompress (default: the archive's size + maxTotalBytes + 64 MiB). */
  byteBudget?: number
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 20_000,
  maxTotalBytes: 1024 * 1024 * 1024,
  maxReadBytes: 2 * 1024 * 1024,
}

/** Thrown by the readers; its message becomes the version's status_reason. */
export class ArchiveProblem extends Error {}

/** Quotes an entry name for a reason: bounded in length, control characters visible. */
export function quoteName(name: string): string {
  const short = name.length > 200 ? `${name.slice(0, 200)}...` : name
  return JSON.stringify(short)
}

const DRIVE_LETTER = /^[a-zA-Z]:/

/**
 * Refuses names that could land outside the extraction directory on any system: NUL bytes, absolute paths
 * (`/x`, `\x`, `C:x`, `C:\x`), and `..` segments whichever separator spells them. `field` names the header
 * field the name came from when it is not the entry's main name (a pax record, a ustar prefix...).
 */
export function checkEntryName(name: string, field?: string): void {
  const unsafe =
    name === '' ||
    name.includes('\0') ||
    name.startsWith('/') ||
    name.startsWith('\\') ||
    DRIVE_LETTER.test(name) ||
    name.split(/[\\/]/).includes('..')
  if (unsafe) throw new ArchiveProblem(`archive entry ${quoteName(name)}${field ? ` (${field})` : ''} has an unsafe path`)
}
