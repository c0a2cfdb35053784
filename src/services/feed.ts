/**
 * The read side of the change feed: a page of changes after a serial, each entity rendered as a public GET
 * renders it (in batches: a few queries per page, never one per entry), or a tombstone.
 */
import type { FeedChange, FeedPage } from '../domain/feed'
import { feedPosition, listChanges } from '../store/changes'
import type { Store } from '../store/db'
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

/** Changes after `since`, oldest first; `limit` is clamped by the caller. */
export async function readFeed(deps: Pick<Deps, 'db' | 'settings'>, since: number, limit: number): Promise<FeedPage> {
  const rows = await listChanges(deps.db, since, limit)
  // Read after the page, so that head is never below a serial it lists.
  const position = await feedPosition(deps.db)
  const ids = (kind: ChangeRow['kind']) => rows.filter((r) => r.kind === kind).map((r) => r.entity_id)
  const publicUrl = deps.settings.publicUrl
  const [publishers, nodes, versions] = await Promise.all([
    publisherChanges(deps.db, ids('publisher')),
    nodeChanges(deps.db, ids('node'), publicUrl),
    versionChanges(deps.db, ids('version'), publicUrl),
  ])
  const rendered = { publisher: publishers, node: nodes, version: versions }
  const changes = rows.map((r) => ({ serial: r.serial, kind: r.kind, id: r.entity_id, ...(rendered[r.kind].get(r.entity_id) ?? DELETED) }))
  return {
    instance: position.instanceId,
    changes,
    next: rows.length ? rows[rows.length - 1]!.serial : since,
    head: position.lastSerial,
  }
}
