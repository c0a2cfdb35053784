/** What the archive readers report, and the problems that make an archive invalid. */

export type EntryKind = 'file' | 'dir' | 'link' | 'other'

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
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 20_000,
  maxTotalBytes: 1024 * 1024 * 1024,
  maxReadBytes: 2 * 1024 * 1024,
}

/** Thrown by the readers; its message becomes the version's status_reason. */
export class ArchiveProblem extends Error {}

/** Refuses absolute paths, `..` segments, drive letters and NUL bytes. */
export function checkEntryName(name: string): void {
  const unsafe =
    name.includes('\0') || name.startsWith('/') || name.startsWith('\\') || /^[a-zA-Z]:/.test(name) || name.split(/[\\/]/).includes('..')
  if (unsafe) throw new ArchiveProblem(`archive entry "${name.slice(0, 200)}" has an unsafe path`)
}
