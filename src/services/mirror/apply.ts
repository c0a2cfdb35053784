/**
 * Applies mirrored items to the store: one transaction per batch, through commitWrite (so the local feed,
 * the search index and the caches follow). Each item is written whole or skipped with a reported reason; what
 * is already as the upstream says is not written again; local entities are never overwritten; a status or an
 * owner changed here (moderation, a claim) stays as it was changed. Used by every sync and by import.
 */
import type { EntityKind, ItemProblem, MirrorItem, NodeItem, PublisherItem, VersionItem } from '../../domain/mirror-items'
import type { Store } from '../../store/db'
import { listOrigins, putOrigins } from '../../store/mirror-entities'
import { insertRows } from '../../store/bulk'
import { listPublishersByIds } from '../../store/publishers'
import type { MirrorOriginRow, NodeRow, PublisherRow } from '../../store/schema'
import { commitWrite, type Write } from '../changes'
import type { Deps } from '../deps'
import { applyVersions } from './apply-versions'
import { batches, differs, nodeRow, publisherRow } from './rows'

export interface ApplyOptions {
  sourceId: string
  /** The mark of a full pass under way: every entity applied is stamped with it as seen. */
  passMark?: string
  /** Nodes whose version list in this batch is complete: their other mirrored versions are gone upstream. */
  completeVersionLists?: ReadonlySet<string>
  /** Archive bytes present here by SHA-256 (an import's): versions announcing one of them get it as their archive. */
  localArchives?: ReadonlyMap<string, { size: number; format: 'zip' | 'tar.gz' }>
  /** Ids skipped in earlier batches of the run: what depends on them is skipped too. */
  skipped: { nodes: Set<string>; publishers: Set<string> }
  /** Runs last, in the same transaction (a sync stores its cursor here, so that state and cursor move together). */
  finish?: (db: Store, result: ApplyResult) => Promise<void>
}

export interface ApplyResult {
  changed: { publishers: number; nodes: number; versions: number; removed: number }
  /** Versions whose node is not here yet (a feed may list a version before its node): try them again later. */
  held: VersionItem[]
  problems: ItemProblem[]
}

/** What one batch knows while it applies. */
export interface Batch {
  w: Write
  opts: ApplyOptions
  result: ApplyResult
  origins: Map<string, MirrorOriginRow>
  /** Origin rows to write at the end: every entity applied, unchanged ones too (a full pass sees them so). */
  newOrigins: MirrorOriginRow[]
}

export const originKey = (kind: EntityKind, id: string) => `${kind}:${id}`

export function recordOrigin(b: Batch, kind: EntityKind, id: string, applied: { status: string; owner?: string; hostNodes?: boolean }) {
  b.newOrigins.push({
    kind,
    entity_id: id,
    source_id: b.opts.sourceId,
    applied_status: applied.status,
    applied_owner: applied.owner ?? '',
    synced_at: b.w.now,
    checked_at: b.opts.passMark ?? b.w.now,
    host_nodes_at: applied.hostNodes ? b.w.now : null,
  })
}

/** Status to write: the upstream's, unless the row was changed here since the last sync (local moderation stays). */
export function keptStatus<S extends string>(current: { status: S } | undefined, origin: MirrorOriginRow | undefined, upstream: S): S {
  return current && origin && current.status !== origin.applied_status ? current.status : upstream
}

const lastById = <T extends { id: string }>(xs: T[]) => [...new Map(xs.map((x) => [x.id, x])).values()]

async function applyPublishers(b: Batch, explicit: PublisherItem[], embedded: PublisherItem[]): Promise<Map<string, PublisherRow>> {
  const ids = [...new Set([...explicit, ...embedded].map((p) => p.id))]
  const current = new Map((await listPublishersByIds(b.w.db, ids)).map((p) => [p.id, p]))
  const explicitIds = new Set(explicit.map((p) => p.id))
  // An embedded publisher only fills a gap: its own entry, when it comes, is as current.
  const items = [...explicit, ...embedded.filter((p) => !explicitIds.has(p.id) && !current.has(p.id))]
  const inserts = []
  for (const p of lastById(items)) {
    const cur = current.get(p.id)
    const origin = b.origins.get(originKey('publisher', p.id))
    if (cur && !origin) {
      b.opts.skipped.publishers.add(p.id)
      b.result.problems.push({ kind: 'publisher', id: p.id, reason: 'a local publisher has this id; the upstream one is not mirrored' })
      continue
    }
    const row = publisherRow(p, keptStatus(cur, origin, p.status), b.w.now)
    recordOrigin(b, 'publisher', p.id, { status: p.status })
    if (cur && !differs(cur, row)) continue
    if (cur) await b.w.db.updateTable('publishers').set(row).where('id', '=', p.id).execute()
    else inserts.push(row)
    b.w.publisher(p.id)
    b.result.changed.publishers++
  }
  for (const part of batches(inserts)) await b.w.db.insertInto('publishers').values(part).execute()
  return new Map((await listPublishersByIds(b.w.db, ids)).map((p) => [p.id, p]))
}

async function applyNodes(b: Batch, items: NodeItem[], publishers: Map<string, PublisherRow>): Promise<void> {
  const lower = items.map((n) => n.id.toLowerCase())
  const current = new Map<string, NodeRow>()
  if (lower.length)
    for (const n of await b.w.db.selectFrom('nodes').selectAll().where('normalized_id', 'in', lower).execute())
      current.set(n.normalized_id, n)
  const inserts = []
  for (const n of lastById(items)) {
    const cur = current.get(n.id.toLowerCase())
    const origin = b.origins.get(originKey('node', n.id))
    const skip = (reason: string) => {
      b.opts.skipped.nodes.add(n.id)
      b.result.problems.push({ kind: 'node', id: n.id, reason })
    }
    if (cur && cur.id !== n.id) skip(`a node "${cur.id}" exists here (ids are unique ignoring case)`)
    else if (cur && !origin) skip('a local node has this id; the upstream one is not mirrored')
    else if (b.opts.skipped.publishers.has(n.publisher_id)) skip(`its publisher "${n.publisher_id}" was skipped`)
    else if (!publishers.has(n.publisher_id)) skip(`its publisher "${n.publisher_id}" is not known`)
    else {
      // A claim here moved the node to a local publisher: the owner stays as claimed.
      const owner = cur && origin && cur.publisher_id !== origin.applied_owner ? cur.publisher_id : n.publisher_id
      const row = nodeRow(n, owner, keptStatus(cur, origin, n.status), b.w.now)
      recordOrigin(b, 'node', n.id, { status: n.status, owner: n.publisher_id })
      if (cur && !differs(cur, row)) continue
      if (cur) await b.w.db.updateTable('nodes').set(row).where('id', '=', n.id).execute()
      else inserts.push(row)
      b.w.node(n.id)
      b.result.changed.nodes++
    }
  }
  await insertRows(b.w.db, 'nodes', inserts)
}

async function applyTombstones(b: Batch, tombstones: { kind: EntityKind; id: string }[]): Promise<void> {
  for (const t of tombstones) {
    const origin = b.origins.get(originKey(t.kind, t.id))
    if (!origin) continue // never mirrored here (or local): nothing to remove
    recordOrigin(b, t.kind, t.id, { status: 'deleted', owner: origin.applied_owner })
    if (t.kind === 'publisher') {
      // Publishers have no deleted state: one that nodes still name is banned, any other removed.
      const used = await b.w.db.selectFrom('nodes').select('id').where('publisher_id', '=', t.id).executeTakeFirst()
      const done = used
        ? await b.w.db
            .updateTable('publishers')
            .set({ status: 'banned', updated_at: b.w.now })
            .where('id', '=', t.id)
            .where('status', '!=', 'banned')
            .executeTakeFirst()
        : await b.w.db.deleteFrom('publishers').where('id', '=', t.id).executeTakeFirst()
      if (Number('numUpdatedRows' in done ? done.numUpdatedRows : done.numDeletedRows) === 0) continue
      b.w.publisher(t.id)
    } else {
      const table = t.kind === 'node' ? 'nodes' : 'node_versions'
      const row = await b.w.db.selectFrom(table).select(['status']).where('id', '=', t.id).executeTakeFirst()
      if (!row || row.status === 'deleted') continue
      await b.w.db.updateTable(table).set({ status: 'deleted', updated_at: b.w.now }).where('id', '=', t.id).execute()
      if (t.kind === 'node') b.w.node(t.id)
      else {
        const v = await b.w.db.selectFrom('node_versions').select('node_id').where('id', '=', t.id).executeTakeFirstOrThrow()
        b.w.version(t.id, v.node_id)
      }
    }
    b.result.changed.removed++
  }
}

export async function applyItems(deps: Deps, items: readonly MirrorItem[], opts: ApplyOptions): Promise<ApplyResult> {
  const result: ApplyResult = { changed: { publishers: 0, nodes: 0, versions: 0, removed: 0 }, held: [], problems: [] }
  const explicit: PublisherItem[] = []
  const embedded: PublisherItem[] = []
  const nodes: NodeItem[] = []
  const versions: VersionItem[] = []
  const tombstones: { kind: EntityKind; id: string }[] = []
  for (const item of items) {
    if ('tombstone' in item) tombstones.push(item)
    else if (item.kind === 'publisher') explicit.push(item.data)
    else if (item.kind === 'node') {
      nodes.push(item.data)
      if (item.publisher) embedded.push(item.publisher)
    } else versions.push(item.data)
  }
  await commitWrite(deps, async (w) => {
    const keys: { kind: EntityKind; ids: string[] }[] = [
      { kind: 'publisher', ids: [...explicit, ...embedded].map((p) => p.id) },
      { kind: 'node', ids: nodes.map((n) => n.id) },
      { kind: 'version', ids: versions.map((v) => v.id) },
    ]
    for (const t of tombstones) keys.find((k) => k.kind === t.kind)!.ids.push(t.id)
    const origins = new Map<string, MirrorOriginRow>()
    for (const k of keys) for (const o of await listOrigins(w.db, k.kind, k.ids)) origins.set(originKey(o.kind, o.entity_id), o)
    const b: Batch = { w, opts, result, origins, newOrigins: [] }
    const publishers = await applyPublishers(b, explicit, embedded)
    await applyNodes(b, nodes, publishers)
    await applyVersions(b, versions)
    await applyTombstones(b, tombstones)
    await putOrigins(w.db, b.newOrigins)
    await opts.finish?.(w.db, result)
  })
  return result
}
