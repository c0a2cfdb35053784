/**
 * Mirrored entities: where each came from (the mirror columns of its own row), and the upstream archives of
 * mirrored versions with their pins.
 */
import { insertRows, selectIn } from './bulk'
import type { Store } from './db'
import type { ChangeKind, MirrorArchiveRow } from './schema'

const chunks = <T>(xs: readonly T[], size: number): T[][] => {
  const out: T[][] = []
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size))
  return out
}

export const ENTITY_TABLE = { publisher: 'publishers', node: 'nodes', version: 'node_versions' } as const

/** The mirror columns of a row; `mirror_source_id` is null on a local entity. */
export interface MirrorColumnValues {
  mirror_source_id: string | null
  mirror_status: string
  mirror_checked_at: string
  mirror_owner?: string
  mirror_host_nodes_at?: string | null
}

/** Where a mirrored entity came from, or undefined for a local one. */
export async function findOrigin(db: Store, kind: ChangeKind, id: string): Promise<MirrorColumnValues | undefined> {
  const row = (await selectIn<MirrorColumnValues>(db, `select * from ${ENTITY_TABLE[kind]}`, 'id', [id]))[0]
  return row?.mirror_source_id ? row : undefined
}

/**
 * Mirrored ones among these publishers or nodes with the facts of their sources, for pages that say where
 * mirrored data came from: one query for a page's list (local ones are left out).
 */
export async function listOriginSources(db: Store, kind: 'publisher' | 'node', ids: readonly string[]) {
  const out = []
  for (const part of chunks(ids, 5000)) {
    if (!part.length) continue
    // Both tables have the columns read here; the name is one of the two.
    const table = ENTITY_TABLE[kind] as 'nodes'
    const rows = await db
      .selectFrom(`${table} as e`)
      .innerJoin('mirror_sources as s', 's.id', 'e.mirror_source_id')
      .select(['e.id as entity_id', 's.id', 's.kind', 's.upstream_instance', 's.last_success_at', 's.last_attempt_at'])
      .where('e.id', 'in', part)
      .execute()
    out.push(...rows)
  }
  return out
}

/** The last full-pass marks (or write times) of mirrored nodes, by id; local and unknown nodes are left out. */
export async function listNodesChecked(db: Store, ids: readonly string[]): Promise<Map<string, string>> {
  const rows = await selectIn<{ id: string; mirror_source_id: string | null; mirror_checked_at: string }>(
    db,
    'select id, mirror_source_id, mirror_checked_at from nodes',
    'id',
    ids,
  )
  return new Map(rows.filter((r) => r.mirror_source_id !== null).map((r) => [r.id, r.mirror_checked_at]))
}

/** Stamps mirrored entities as seen by the full pass of this mark. */
export async function touchOrigins(db: Store, kind: ChangeKind, ids: readonly string[], mark: string): Promise<void> {
  for (const part of chunks(ids, 500)) {
    if (part.length)
      await db
        .updateTable(ENTITY_TABLE[kind])
        .set({ mirror_checked_at: mark })
        .where('id', 'in', part)
        .where('mirror_source_id', 'is not', null)
        .execute()
  }
}

/**
 * Entities of a source that the full pass of this mark did not see. A scan, once per full pass: an index
 * would cost every mirrored row a write.
 */
export async function listUnseen(db: Store, sourceId: string, kind: ChangeKind, mark: string): Promise<string[]> {
  const rows = await db
    .selectFrom(ENTITY_TABLE[kind])
    .select('id')
    .where('mirror_source_id', '=', sourceId)
    .where('mirror_checked_at', '!=', mark)
    .execute()
  return rows.map((r) => r.id)
}

export function listMirrorArchives(db: Store, versionIds: readonly string[]): Promise<MirrorArchiveRow[]> {
  return selectIn<MirrorArchiveRow>(db, 'select * from mirror_archives', 'version_id', versionIds)
}

export function findMirrorArchive(db: Store, versionId: string): Promise<MirrorArchiveRow | undefined> {
  return db.selectFrom('mirror_archives').selectAll().where('version_id', '=', versionId).executeTakeFirst()
}

/** Records (or updates) where mirrored versions' archives are upstream, with their pins. */
export async function putMirrorArchives(db: Store, rows: readonly MirrorArchiveRow[]): Promise<void> {
  await insertRows(
    db,
    'mirror_archives',
    rows as readonly (MirrorArchiveRow & Record<string, unknown>)[],
    `on conflict (version_id) do update set source_id = excluded.source_id, url = excluded.url, sha256 = excluded.sha256,
      size_bytes = excluded.size_bytes, etag = excluded.etag, problem = excluded.problem, problem_at = excluded.problem_at`,
  )
}

export async function setArchiveProblem(db: Store, versionId: string, problem: string, at: string | null): Promise<void> {
  await db.updateTable('mirror_archives').set({ problem, problem_at: at }).where('version_id', '=', versionId).execute()
}
