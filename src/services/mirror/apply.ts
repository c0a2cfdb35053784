/**
 * Applies mirrored items to the store: one transaction per batch, through commitWrite (so the local feed,
 * the search index and the caches follow). Each item is written whole or skipped with a reported reason (one
 * holding NUL is, see domain/nul.ts); what is already as the upstream says is not written again; local entities
 * are never overwritten; a status or an owner changed here (moderation, a claim) stays as it was changed. Used by
 * every sync and by import.
 */
import type { EntityKind, ItemProblem, MirrorItem, NodeItem, PublisherItem, VersionItem } from '../../domain/mirror-items'
import { holdsNul, nulPath } from '../../domain/nul'
import { breathe, insertRows, selectIn } from '../../store/bulk'
import type { Store } from '../../store/db'
import { ENTITY_TABLE, touchOrigins, type MirrorColumnValues } from '../../store/mirror-entities'
import { insertNodeCounts, setNodeCounts, type NodeCounts } from '../../store/node-downloads'
import type { NodeRow, PublisherRow } from '../../store/schema'
import type { HeldIntent } from '../blob-intent'
import { commitWrite, type Write } from '../changes'
import type { Deps } from '../deps'
import { applyVersions } from './apply-versions'
import { differs, nodeRow, publisherRow } from './rows'

export interface ApplyOptions {
  sourceId: string
  /** The mark of a full pass under way: every entity applied is stamped with it as seen. */
  passMark?: string
  /** Nodes whose version list in this batch is complete: their other mirrored versions are gone upstream. */
  completeVersionLists?: ReadonlySet<string>
  /** Archive bytes present here by SHA-256 (an import's): versions announcing one of them get it as their archive. */
  localArchives?: ReadonlyMap<string, { size: number; format: 'zip' | 'tar.gz' }>
  /** The intent that holds `localArchives` from a sweep: renewed in every batch's transaction (or the batch fails). */
  localIntent?: Pick<HeldIntent, 'renew'>
  /** Archive bytes carried here that the archive check refused (an import's), by SHA-256, with why: reported, never stored. */
  refusedArchives?: ReadonlyMap<string, string>
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
  /** Entities whose row is as the upstream says but whose full-pass mark is not this pass's: stamped at the end. */
  seen: Record<EntityKind, string[]>
}

/** The mirror columns an applied entity gets: this source, the upstream's status (and owner), seen now. */
export function mirrorColumns(b: Batch, status: string, owner?: string) {
  return {
    mirror_source_id: b.opts.sourceId,
    mirror_status: status,
    mirror_checked_at: b.opts.passMark ?? b.w.now,
    ...(owner !== undefined && { mirror_owner: owner }),
  }
}

/** The origin of a stored row: undefined for a local entity (or none). */
export const originOf = <R extends MirrorColumnValues>(row: R | undefined): R | undefined =>
  row && row.mirror_source_id !== null ? row : undefined

/**
 * For a row the upstream leaves as it is: writes its mirror columns if they change (another source, status or
 * owner), or stamps it as seen by the full pass under way.
 */
export async function keepOrigin(
  b: Batch,
  kind: EntityKind,
  id: string,
  current: MirrorColumnValues,
  next: ReturnType<typeof mirrorColumns> & { mirror_host_nodes_at?: string | null },
): Promise<void> {
  const moved = (Object.keys(next) as (keyof typeof next)[]).some((k) => k !== 'mirror_checked_at' && current[k] !== next[k])
  if (moved) await b.w.db.updateTable(ENTITY_TABLE[kind]).set(next).where('id', '=', id).execute()
  else if (b.opts.passMark && current.mirror_checked_at !== b.opts.passMark) b.seen[kind].push(id)
}

/** Status to write: the upstream's, unless the row was changed here since the last sync (local moderation stays). */
export function keptStatus<S extends string>(current: { status: S } | undefined, origin: MirrorColumnValues | undefined, upstream: S): S {
  return current && origin && current.status !== origin.mirror_status ? current.status : upstream
}

const lastById = <T extends { id: string }>(xs: T[]) => [...new Map(xs.map((x) => [x.id, x])).values()]

/** Applies publishers; returns the ids of the publishers there are now (for the nodes that name them). */
async function applyPublishers(b: Batch, explicit: PublisherItem[], embedded: PublisherItem[], named: string[]): Promise<Set<string>> {
  const ids = [...explicit, ...embedded].map((p) => p.id).concat(named)
  const current = new Map((await selectIn<PublisherRow>(b.w.db, 'select * from publishers', 'id', ids)).map((p) => [p.id, p]))
  const there = new Set(current.keys())
  const explicitIds = new Set(explicit.map((p) => p.id))
  // An embedded publisher only fills a gap: its own entry, when it comes, is as current.
  const items = [...explicit, ...embedded.filter((p) => !explicitIds.has(p.id) && !current.has(p.id))]
  const inserts: Record<string, unknown>[] = []
  for (const p of lastById(items)) {
    await breathe()
    const cur = current.get(p.id)
    const origin = originOf(cur)
    if (cur && !origin) {
      b.opts.skipped.publishers.add(p.id)
      b.result.problems.push({ kind: 'publisher', id: p.id, reason: 'a local publisher has this id; the upstream one is not mirrored' })
      continue
    }
    const row = publisherRow(p, keptStatus(cur, origin, p.status), b.w.now, cur)
    if (!(await writeMirrored(b, 'publisher', p.id, cur, row, mirrorColumns(b, p.status), inserts))) continue
    there.add(p.id)
    b.w.publisher(p.id)
    b.result.changed.publishers++
  }
  await insertRows(b.w.db, 'publishers', inserts)
  return there
}

/**
 * A mirrored publisher or node as the upstream has it now: when nothing differs, only its origin is kept;
 * otherwise it is updated in place, or queued in `inserts` when new here. Whether it changed.
 */
async function writeMirrored(
  b: Batch,
  kind: 'publisher' | 'node',
  id: string,
  cur: MirrorColumnValues | undefined,
  row: ReturnType<typeof publisherRow> | ReturnType<typeof nodeRow>,
  mirror: ReturnType<typeof mirrorColumns>,
  inserts: Record<string, unknown>[],
): Promise<boolean> {
  if (cur && !differs(cur, row)) {
    await keepOrigin(b, kind, id, cur, mirror)
    return false
  }
  // A node's count lives in its narrow row (schema 17), with a copy of its ranking: written apart, by the caller.
  const { downloads: _, ...columns } = row as typeof row & { downloads?: number }
  if (cur)
    await b.w.db
      .updateTable(ENTITY_TABLE[kind])
      .set({ ...columns, ...mirror })
      .where('id', '=', id)
      .execute()
  else inserts.push({ ...columns, ...mirror })
  return true
}

async function applyNodes(b: Batch, items: NodeItem[], publishers: Set<string>): Promise<void> {
  const current = new Map(
    (
      await selectIn<NodeRow>(
        b.w.db,
        'select nodes.*, coalesce(node_downloads.downloads, 0) as downloads from nodes left join node_downloads on node_downloads.node_id = nodes.id',
        'normalized_id',
        items.map((n) => n.id.toLowerCase()),
      )
    ).map((n) => [n.normalized_id, n]),
  )
  const inserts: Record<string, unknown>[] = []
  const newCounts: NodeCounts[] = []
  // Ids in this batch by their lower case: the first of two differing only in case is kept, as one stored would be.
  const batchIds = new Map<string, string>()
  for (const n of lastById(items)) {
    await breathe()
    const cur = current.get(n.id.toLowerCase())
    const first = batchIds.get(n.id.toLowerCase()) ?? (batchIds.set(n.id.toLowerCase(), n.id), n.id)
    const origin = originOf(cur)
    const skip = (reason: string) => {
      b.opts.skipped.nodes.add(n.id)
      b.result.problems.push({ kind: 'node', id: n.id, reason })
    }
    if (cur && cur.id !== n.id) skip(`a node "${cur.id}" exists here (ids are unique ignoring case)`)
    else if (first !== n.id) skip(`a node "${first}" comes first from the upstream (ids are unique ignoring case)`)
    else if (cur && !origin) skip('a local node has this id; the upstream one is not mirrored')
    else if (b.opts.skipped.publishers.has(n.publisher_id)) skip(`its publisher "${n.publisher_id}" was skipped`)
    else if (!publishers.has(n.publisher_id)) skip(`its publisher "${n.publisher_id}" is not known`)
    else {
      // A claim here moved the node to a local publisher: the owner stays as claimed.
      const owner = cur && origin && cur.publisher_id !== origin.mirror_owner ? cur.publisher_id : n.publisher_id
      const row = nodeRow(n, owner, keptStatus(cur, origin, n.status), b.w.now, cur)
      if (!(await writeMirrored(b, 'node', n.id, cur, row, mirrorColumns(b, n.status, n.publisher_id), inserts))) continue
      const counts = { node_id: n.id, search_ranking: row.search_ranking, downloads: row.downloads }
      if (cur) await setNodeCounts(b.w.db, n.id, counts)
      else newCounts.push(counts)
      b.w.node(n.id)
      b.result.changed.nodes++
    }
  }
  await insertRows(b.w.db, 'nodes', inserts)
  await insertNodeCounts(b.w.db, newCounts)
}

type TombstoneRow = MirrorColumnValues & { id: string; status: string; node_id?: string }

async function applyTombstones(b: Batch, tombstones: { kind: EntityKind; id: string }[]): Promise<void> {
  const rows = new Map<string, TombstoneRow>()
  for (const kind of ['publisher', 'node', 'version'] as const) {
    const ids = tombstones.filter((t) => t.kind === kind).map((t) => t.id)
    for (const r of await selectIn<TombstoneRow>(b.w.db, `select * from ${ENTITY_TABLE[kind]}`, 'id', ids)) rows.set(`${kind}:${r.id}`, r)
  }
  for (const t of tombstones) {
    await breathe()
    const row = originOf(rows.get(`${t.kind}:${t.id}`))
    if (!row) continue // never mirrored here (or local): nothing to remove
    const mirror = mirrorColumns(b, 'deleted', t.kind === 'node' ? row.mirror_owner : undefined)
    if (t.kind === 'publisher') {
      // Publishers have no deleted state: one that nodes still name is banned, any other removed.
      const used = await b.w.db.selectFrom('nodes').select('id').where('publisher_id', '=', t.id).executeTakeFirst()
      if (!used) await b.w.db.deleteFrom('publishers').where('id', '=', t.id).execute()
      else if (row.status !== 'banned')
        await b.w.db
          .updateTable('publishers')
          .set({ status: 'banned', updated_at: b.w.now, ...mirror })
          .where('id', '=', t.id)
          .execute()
      else {
        await keepOrigin(b, t.kind, t.id, row, mirror)
        continue
      }
      b.w.publisher(t.id)
    } else {
      const table = ENTITY_TABLE[t.kind]
      if (row.status === 'deleted') {
        await keepOrigin(b, t.kind, t.id, row, mirror)
        continue
      }
      await b.w.db
        .updateTable(table)
        .set({ status: 'deleted', updated_at: b.w.now, ...mirror })
        .where('id', '=', t.id)
        .execute()
      if (t.kind === 'node') b.w.node(t.id)
      else b.w.version(t.id, row.node_id!)
    }
    b.result.changed.removed++
    rows.delete(`${t.kind}:${t.id}`) // a repeated tombstone finds it removed
  }
}

export async function applyItems(deps: Deps, items: readonly MirrorItem[], opts: ApplyOptions): Promise<ApplyResult> {
  const result: ApplyResult = { changed: { publishers: 0, nodes: 0, versions: 0, removed: 0 }, held: [], problems: [] }
  const explicit: PublisherItem[] = []
  const embedded: PublisherItem[] = []
  const nodes: NodeItem[] = []
  const versions: VersionItem[] = []
  const tombstones: { kind: EntityKind; id: string }[] = []
  const refused = (kind: EntityKind, entity: { id: string }) => {
    if (!holdsNul(entity)) return false
    result.problems.push({ kind, id: entity.id, reason: `${nulPath(entity)} holds a NUL character (U+0000), which no store can keep` })
    if (kind !== 'version') opts.skipped[kind === 'node' ? 'nodes' : 'publishers'].add(entity.id)
    return true
  }
  for (const item of items) {
    await breathe() // a batch is thousands of items, each looked through for NUL
    if ('tombstone' in item) tombstones.push(item)
    else if (refused(item.kind, item.data)) continue
    else if (item.kind === 'publisher') explicit.push(item.data)
    else if (item.kind === 'node') {
      nodes.push(item.data)
      if (item.publisher && !refused('publisher', item.publisher)) embedded.push(item.publisher)
    } else versions.push(item.data)
  }
  await commitWrite(deps, async (w) => {
    await opts.localIntent?.renew(w.db, w.now)
    const b: Batch = { w, opts, result, seen: { publisher: [], node: [], version: [] } }
    const publishers = await applyPublishers(
      b,
      explicit,
      embedded,
      nodes.map((n) => n.publisher_id),
    )
    await applyNodes(b, nodes, publishers)
    await applyVersions(b, versions)
    await applyTombstones(b, tombstones)
    for (const kind of ['publisher', 'node', 'version'] as const) await touchOrigins(w.db, kind, b.seen[kind], opts.passMark!)
    await opts.finish?.(w.db, result)
  })
  return result
}
