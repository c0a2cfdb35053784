/**
 * The one way services write. `commitWrite` runs the work in one transaction, writes in that same transaction
 * what it touched to the change feed, its audit entries and the changed nodes' documents, and after the commit
 * brings the search index and the JSON caches up to date before the write answers. The caches move on only after
 * the index did, so that nothing rendered from the old index state can be kept as current. Download counts, written
 * in batches by a writer of their own, come in through `commitCounts`, the same way after their commit.
 */
import type { Store } from '../store/db'
import { appendChanges, insertAudit } from '../store/changes'
import type { DownloadWriter } from '../store/download-writer'
import type { ChangeKind } from '../store/schema'
import type { Actor } from './access'
import { timestamp, type Deps } from './deps'
import { writeDocuments } from './node-documents'
import { ownSerials } from './own-serials'
import { unappliedChanges } from './unapplied-changes'
import { inWriteTurn } from './write-turn'

export interface AuditEntry {
  action: string
  targetKind: string
  targetId: string
  before?: unknown
  after?: unknown
}

/** What a write's work gets: the transaction, and where it says what it changed. */
export interface Write {
  db: Store
  now: string
  /** The node's rendering changed (its fields, counters, latest version or publisher). */
  node(id: string): void
  /** The publisher changed; its name and members show inside its nodes too. */
  publisher(id: string): void
  /**
   * The version changed; its node's rendering may too. `nodeUnchanged` says it does not (the version is not the
   * node's latest before or after), which spares a bulk writer (a mirror) a feed entry, an index refresh and a
   * stored document per node; said wrongly, the node's stored document stays out of date.
   */
  version(id: string, nodeId: string, opts?: { nodeUnchanged?: boolean }): void
  /** Records who did what, in the same transaction. Never pass a credential. */
  audit(actor: Actor | undefined, entry: AuditEntry): void
}

/** What a write needs: the store and clock, and the index and caches it brings up to date after the commit. */
export type WriteDeps = Pick<Deps, 'db' | 'now' | 'search' | 'nodeJson'>

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value))

export async function commitWrite<T>(deps: WriteDeps, work: (w: Write) => Promise<T>): Promise<T> {
  const now = timestamp(deps)
  const nodes = new Set<string>()
  const publishers = new Set<string>()
  const versions = new Set<string>()
  /** Nodes whose rendering did not change, but one of whose versions did (what install and download answers hold). */
  const versionNodes = new Set<string>()
  const result = await inWriteTurn(deps.db, async () => {
    const committed = await deps.db.transaction().execute(async (trx) => {
      const audits: Parameters<typeof insertAudit>[1][number][] = []
      const w: Write = {
        db: trx,
        now,
        node: (id) => nodes.add(id),
        publisher: (id) => publishers.add(id),
        version(id, nodeId, opts) {
          versions.add(id)
          if (!opts?.nodeUnchanged) nodes.add(nodeId)
          else versionNodes.add(nodeId)
        },
        audit(actor, e) {
          audits.push({
            at: now,
            actor_id: actor?.user?.id ?? null,
            actor_address: actor?.address ?? '',
            action: e.action,
            target_kind: e.targetKind,
            target_id: e.targetId,
            before_json: json(e.before),
            after_json: json(e.after),
          })
        },
      }
      const value = await work(w)
      // The changed nodes' documents, from the rows as this write leaves them (a publisher shows in them when served).
      await writeDocuments(trx, [...nodes])
      const touched = (kind: ChangeKind, ids: Set<string>) => [...ids].map((id) => ({ kind, id }))
      const fed = [...touched('publisher', publishers), ...touched('node', nodes), ...touched('version', versions)]
      const serials = await appendChanges(trx, fed, now)
      await insertAudit(trx, audits)
      return { value, serials }
    })
    // After the commit only (serials of a rolled-back write are given again, maybe to another process's write), and
    // in the turn: the store's follower reads the feed in a turn of its own, so it never sees them unrecorded.
    if (committed.serials) ownSerials.record(deps.db, committed.serials)
    return committed
  })
  for (const id of nodes) versionNodes.delete(id)
  if (versionNodes.size) deps.nodeJson.versionsChanged([...versionNodes])
  const changed = { nodes: [...nodes], publishers: [...publishers] }
  try {
    await applyChanges(deps, changed)
  } catch (err) {
    // Its serials are this process's own, which the follower skips: it applies the write from here instead.
    unappliedChanges.keep(deps.db, changed)
    throw markCommitted(err)
  }
  return result.value
}

/**
 * Download counts, written by `writer` (in a thread of its own on a SQLite file: store/download-writer.ts) in a write
 * turn, then applied as commitWrite applies its changes: the index takes the new counts, rendered nodes keep their
 * text and take the numbers. The nodes are fed as changed, for other instances and mirrors.
 */
export async function commitCounts(deps: WriteDeps, counts: ReadonlyMap<string, number>, writer: DownloadWriter): Promise<void> {
  const now = timestamp(deps)
  const { totals } = await inWriteTurn(deps.db, async () => {
    const written = await writer.write(counts, now)
    if (written.serials) ownSerials.record(deps.db, written.serials)
    return written
  })
  try {
    await applyChanges(deps, { nodes: [], publishers: [], counts: totals })
  } catch (err) {
    // The follower reads these nodes again, counts and all, as it would another process's counts.
    unappliedChanges.keep(deps.db, { nodes: [...totals.keys()], publishers: [] })
    throw markCommitted(err)
  }
}

/** The write is in the store: whoever retries a failed write must not write this one again. */
function markCommitted(err: unknown): unknown {
  if (err instanceof Error) Object.assign(err, { [COMMITTED]: true })
  return err
}

const COMMITTED = Symbol('committed')

/** Whether a failed commitWrite failed after its transaction committed (bringing the index or caches up to date). */
export const failedAfterCommit = (err: unknown): boolean => err instanceof Error && COMMITTED in err

/**
 * Brings the search index and the caches in step with committed changes (this instance's own, or another's).
 * `counts`: nodes whose download count alone changed, with the new count; the index takes it (order and
 * popularity), rendered nodes keep their text and take the number.
 */
export async function applyChanges(
  deps: Pick<Deps, 'search' | 'nodeJson'>,
  changed: { nodes: string[]; publishers: string[]; counts?: ReadonlyMap<string, number> },
) {
  if (changed.counts?.size) {
    try {
      await deps.search.countsChanged(changed.counts)
    } finally {
      // Cached nodes take the new counts even when the index could not (its counts are then not used).
      deps.nodeJson.countsChanged(changed.counts)
    }
  }
  if (changed.nodes.length) {
    await deps.search.nodesChanged(changed.nodes)
    deps.nodeJson.nodesChanged(changed.nodes)
  }
  if (changed.publishers.length) {
    await deps.search.publishersChanged(changed.publishers)
    deps.nodeJson.publishersChanged()
  }
}
