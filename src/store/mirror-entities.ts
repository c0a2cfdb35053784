/** Mirrored entities: where each came from (origins), and the upstream archives of mirrored versions with their pins. */
import { insertRows } from './bulk'
import type { Store } from './db'
import type { ChangeKind, MirrorArchiveRow, MirrorOriginRow } from './schema'

const chunks = <T>(xs: readonly T[], size: number): T[][] => {
  const out: T[][] = []
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size))
  return out
}

export async function listOrigins(db: Store, kind: ChangeKind, ids: readonly string[]): Promise<MirrorOriginRow[]> {
  const out: MirrorOriginRow[] = []
  for (const part of chunks(ids, 5000)) {
    if (part.length)
      out.push(...(await db.selectFrom('mirror_origins').selectAll().where('kind', '=', kind).where('entity_id', 'in', part).execute()))
  }
  return out
}

/** Origins of entities with the facts of their sources, for pages that say where mirrored data came from. */
export async function listOriginSources(db: Store, kind: ChangeKind, ids: readonly string[]) {
  const out = []
  for (const part of chunks(ids, 5000)) {
    if (!part.length) continue
    const rows = await db
      .selectFrom('mirror_origins as o')
      .innerJoin('mirror_sources as s', 's.id', 'o.source_id')
      .select(['o.entity_id', 'o.synced_at', 's.id', 's.kind', 's.upstream_instance', 's.last_success_at', 's.last_attempt_at'])
      .where('o.kind', '=', kind)
      .where('o.entity_id', 'in', part)
      .execute()
    out.push(...rows)
  }
  return out
}

export function findOrigin(db: Store, kind: ChangeKind, id: string): Promise<MirrorOriginRow | undefined> {
  return db.selectFrom('mirror_origins').selectAll().where('kind', '=', kind).where('entity_id', '=', id).executeTakeFirst()
}

/** Records (or moves) the origin of entities. */
export async function putOrigins(db: Store, rows: readonly MirrorOriginRow[]): Promise<void> {
  await insertRows(
    db,
    'mirror_origins',
    rows as readonly (MirrorOriginRow & Record<string, unknown>)[],
    `on conflict (kind, entity_id) do update set source_id = excluded.source_id, applied_status = excluded.applied_status,
      applied_owner = excluded.applied_owner, synced_at = excluded.synced_at, checked_at = excluded.checked_at,
      host_nodes_at = coalesce(excluded.host_nodes_at, mirror_origins.host_nodes_at)`,
  )
}

/** Stamps entities as seen by the full pass of this mark. */
export async function touchOrigins(db: Store, kind: ChangeKind, ids: readonly string[], mark: string): Promise<void> {
  for (const part of chunks(ids, 5000)) {
    if (part.length)
      await db.updateTable('mirror_origins').set({ checked_at: mark }).where('kind', '=', kind).where('entity_id', 'in', part).execute()
  }
}

/** Entities of a source that the full pass of this mark did not see. */
export async function listUnseen(db: Store, sourceId: string, kind: ChangeKind, mark: string): Promise<string[]> {
  const rows = await db
    .selectFrom('mirror_origins')
    .select('entity_id')
    .where('source_id', '=', sourceId)
    .where('kind', '=', kind)
    .where('checked_at', '!=', mark)
    .execute()
  return rows.map((r) => r.entity_id)
}

export async function setHostNodesFetched(db: Store, versionId: string, at: string): Promise<void> {
  await db
    .updateTable('mirror_origins')
    .set({ host_nodes_at: at })
    .where('kind', '=', 'version')
    .where('entity_id', '=', versionId)
    .execute()
}

export async function listMirrorArchives(db: Store, versionIds: readonly string[]): Promise<MirrorArchiveRow[]> {
  const out: MirrorArchiveRow[] = []
  for (const part of chunks(versionIds, 5000)) {
    if (part.length) out.push(...(await db.selectFrom('mirror_archives').selectAll().where('version_id', 'in', part).execute()))
  }
  return out
}

export function findMirrorArchive(db: Store, versionId: string): Promise<MirrorArchiveRow | undefined> {
  return db.selectFrom('mirror_archives').selectAll().where('version_id', '=', versionId).executeTakeFirst()
}

export async function putMirrorArchives(db: Store, rows: readonly MirrorArchiveRow[]): Promise<void> {
  for (const part of chunks(rows, 3000)) {
    if (!part.length) continue
    await db
      .insertInto('mirror_archives')
      .values(part)
      .onConflict((oc) =>
        oc.column('version_id').doUpdateSet((eb) => ({
          source_id: eb.ref('excluded.source_id'),
          url: eb.ref('excluded.url'),
          sha256: eb.ref('excluded.sha256'),
          size_bytes: eb.ref('excluded.size_bytes'),
          etag: eb.ref('excluded.etag'),
          problem: eb.ref('excluded.problem'),
          problem_at: eb.ref('excluded.problem_at'),
        })),
      )
      .execute()
  }
}

export async function setArchiveProblem(db: Store, versionId: string, problem: string, at: string | null): Promise<void> {
  await db.updateTable('mirror_archives').set({ problem, problem_at: at }).where('version_id', '=', versionId).execute()
}

/**
 * Which of these versions have an archive here: stored, or known upstream and fetched on first download
 * (a source mirrored with archives) unless its bytes were refused.
 */
export async function listAvailableArchives(db: Store, versionIds: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>()
  for (const part of chunks(versionIds, 5000)) {
    if (!part.length) continue
    const stored = await db.selectFrom('archives').select('version_id').where('version_id', 'in', part).execute()
    for (const r of stored) out.add(r.version_id)
    const fetchable = await db
      .selectFrom('mirror_archives')
      .innerJoin('mirror_sources', 'mirror_sources.id', 'mirror_archives.source_id')
      .select('mirror_archives.version_id')
      .where('mirror_archives.version_id', 'in', part)
      .where('mirror_sources.archives', '!=', 'none')
      .where('mirror_archives.problem', '=', '')
      .execute()
    for (const r of fetchable) out.add(r.version_id)
  }
  return out
}
