/**
 * Which archive a download URL names, remembered (its SHA-256, format and the opened blob) until anything about
 * that node changes, so that downloading a popular archive reads nothing from the store (a local copy of object
 * storage is opened again). Only archives anyone may download are kept (an active version of an active node): a
 * flagged one depends on the caller, and is looked up each time.
 */
import type { Actor } from './access'
import { openArchive } from './archives'
import type { ArchiveRow } from '../store/schema'
import type { Deps } from './deps'
import { createNodeMemo } from './node-memo'

export const ARCHIVE_LOOKUP_MAX_BYTES = 4 * 1024 * 1024
/**
 * What an entry costs beside its key: the map entry and two small objects, the hash text, a Blob handle. Only what
 * a download reads is kept (not the node and version rows, with their descriptions): entries of 2 KB held fewer
 * archives than the 2,200 of the real registry, and a crawl of every archive in turn then missed every time.
 */
const ENTRY_BYTES = 512

/** `forEveryone`: an active version of an active node, which any caller gets (else a flagged one, which depends on who asks). */
export type KnownArchive = Pick<ArchiveRow, 'sha256' | 'format'> & { bytes: Blob; forEveryone: boolean }

export type ArchiveLookup = (actor: Actor, nodeId: string, version: string) => Promise<KnownArchive>

export function createArchiveLookup(deps: Deps, maxBytes = ARCHIVE_LOOKUP_MAX_BYTES): ArchiveLookup {
  const memo = createNodeMemo<KnownArchive>(deps.nodeJson, maxBytes, ENTRY_BYTES)
  return async (actor, nodeId, version) => {
    const key = `${nodeId}\n${version}`
    const hit = memo.get(key)
    if (hit) {
      // A file of the blob store and object storage's own handle stay good; a local copy of object storage is opened
      // again (a lookup in memory and a stat): copies are evicted, least recently used first, and a download
      // remembered here was sent from the removed file (a 500) until its node changed. Opened again, the copy also
      // counts as used. Not for the disk's own files: a stat is a tenth of a download's CPU.
      if (!deps.blobs.evictsCopies || 'presign' in hit.bytes) return hit
      const bytes = await deps.blobs.open(hit.sha256)
      if (bytes) return { ...hit, bytes }
    }
    const started = memo.start()
    const opened = await openArchive(deps, actor, nodeId, version)
    const forEveryone = opened.node.status === 'active' && opened.versionRow.status === 'active'
    const known: KnownArchive = { sha256: opened.sha256, format: opened.format, bytes: opened.bytes, forEveryone }
    if (forEveryone) memo.set(key, opened.node.id, started, known)
    return known
  }
}
