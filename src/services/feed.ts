/**
 * The read side of the change feed: a page of changes after a serial, each entity rendered as a public GET
 * renders it (in batches: a few queries per page, never one per entry), or a tombstone.
 */
import type { FeedChange, FeedPage } from '../domain/feed'
import { feedPosition, listChanges } from '../store/changes'
import type { Store } from '../store/db'
import { breathe } from '../store/bulk'
import { listMirrorArchives } from '../store/mirror-entities'
import { listNodesByIds } from '../store/nodes'
import { listPublishersByIds } from '../store/publishers'
import type { ChangeRow } from '../store/schema'
import { availableArchiveIds, listArchives, listVersionsByIds } from '../store/versions'
import type { Deps } from './deps'
import { renderNodes } from './node-documents'
import { renderPublishers, versionJson } from './views'

type Rendered = Omit<FeedChange, 'serial' | 'kind' | 'id'>
const DELETED: Rendered = { op: 'delete' }

async function publisherChanges(db: Store, ids: string[]): Promise<Map<string, Rendered>> {
  // A deleted publisher keeps its row (its id stays taken) but is gone: followers get its tombstone.
  const rows = (await listPublishersByIds(db, ids)).filter((p) => p.deleted_at === null)
  const json = await renderPublishers(db, rows)
  return new Map(rows.map((p, i) => [p.id, { op: p.status === 'banned' ? 'ban' : 'upsert', entity: json[i]! }]))
}

async function nodeChanges(db: Store, ids: string[], publicUrl: string): Promise<Map<string, Rendered>> {
  const rows = (await listNodesByIds(db, ids)).filter((n) => n.status !== 'deleted')
  const json = await renderNodes(db, rows, { publicUrl })
  return new Map(rows.map((n, i) => [n.id, { op: n.status === 'banned' ? 'ban' : 'upsert', entity: json[i]! }]))
}

async function hostNodesOf(db: Store, versionIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (!versionIds.length) return out
  const rows = await db
    .selectFrom('host_nodes')
    .select(['version_id', 'name'])
    .where('version_id', 'in', versionIds)
    .orderBy('name')
    .execute()
  for (const r of rows) (out.get(r.version_id) ?? out.set(r.version_id, []).get(r.version_id)!).push(r.name)
  return out
}

async function versionChanges(db: Store, ids: string[], publicUrl: string): Promise<Map<string, Rendered>> {
  const rows = (await listVersionsByIds(db, ids)).filter((v) => v.status !== 'deleted')
  const versionIds = rows.map((v) => v.id)
  const [nodes, available, stored, pinned, hostNodes] = await Promise.all([
    listNodesByIds(db, [...new Set(rows.map((v) => v.node_id))]),
    availableArchiveIds(db, versionIds),
    listArchives(db, versionIds),
    listMirrorArchives(db, versionIds),
    hostNodesOf(db, versionIds),
  ])
  const nodeById = new Map(nodes.map((n) => [n.id, n]))
  // The SHA-256 a downstream pins: of the bytes stored here, or the one pinned here before they were fetched.
  const shaOf = new Map<string, { sha256: string; size: number }>()
  for (const p of pinned) if (p.sha256 && p.size_bytes !== null) shaOf.set(p.version_id, { sha256: p.sha256, size: p.size_bytes })
  for (const a of stored) shaOf.set(a.version_id, { sha256: a.sha256, size: a.size_bytes })
  const out = new Map<string, Rendered>()
  for (const v of rows) {
    const node = nodeById.get(v.node_id)
    // A deleted node's versions are gone too (a GET of one answers 404).
    if (!node || node.status === 'deleted') continue
    const entity = versionJson(v, node, { publicUrl, hasArchive: available.has(v.id), includeReason: true })
    const archive = available.has(v.id) ? shaOf.get(v.id) : undefined
    out.set(v.id, {
      op: v.status === 'banned' ? 'ban' : 'upsert',
      entity,
      host_nodes: hostNodes.get(v.id) ?? [],
      ...(archive && { archive }),
    })
  }
  return out
}

/** The entities `rows` name, rendered into `into` kind by kind (a few queries for all of them). */
async function renderInto(db: Store, rows: ChangeRow[], publicUrl: string, into: Record<ChangeRow['kind'], Map<string, Rendered>>) {
  const ids = (kind: ChangeRow['kind']) => rows.filter((r) => r.kind === kind).map((r) => r.entity_id)
  const [publishers, nodes, versions] = await Promise.all([
    publisherChanges(db, ids('publisher')),
    nodeChanges(db, ids('node'), publicUrl),
    versionChanges(db, ids('version'), publicUrl),
  ])
  for (const [id, change] of publishers) into.publisher.set(id, change)
  for (const [id, change] of nodes) into.node.set(id, change)
  for (const [id, change] of versions) into.version.set(id, change)
}

/**
 * Entries rendered in one go: a page of 1,000 nodes took 55-66 ms at 100,000 nodes, and SQLite answers synchronously,
 * so other requests now get their turn between parts of a page.
 */
const RENDERED_AT_ONCE = 100

/** Changes after `since`, oldest first; `limit` is clamped by the caller. */
export async function readFeed(deps: Pick<Deps, 'db' | 'settings'>, since: number, limit: number): Promise<FeedPage> {
  const rows = await listChanges(deps.db, since, limit)
  // Read after the page, so that head is never below a serial it lists.
  const position = await feedPosition(deps.db)
  const publicUrl = deps.settings.publicUrl
  const rendered: Record<ChangeRow['kind'], Map<string, Rendered>> = { publisher: new Map(), node: new Map(), version: new Map() }
  for (let from = 0; from < rows.length; from += RENDERED_AT_ONCE) {
    if (from) await breathe()
    await renderInto(deps.db, rows.slice(from, from + RENDERED_AT_ONCE), publicUrl, rendered)
  }
  const changes = rows.map((r) => ({ serial: r.serial, kind: r.kind, id: r.entity_id, ...(rendered[r.kind].get(r.entity_id) ?? DELETED) }))
  return {
    instance: position.instanceId,
    changes,
    next: rows.length ? rows[rows.length - 1]!.serial : since,
    head: position.lastSerial,
  }
}
