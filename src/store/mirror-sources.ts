/** The upstreams this registry mirrors: one row each, with its cursor, archive mode and the outcome of its last run. */
import type { Updateable } from 'kysely'
import type { Store } from './db'
import type { MirrorSourceKind, MirrorSourceRow, MirrorSourceTable } from './schema'

export function findSource(db: Store, id: string): Promise<MirrorSourceRow | undefined> {
  return db.selectFrom('mirror_sources').selectAll().where('id', '=', id).executeTakeFirst()
}

export function listSources(db: Store): Promise<MirrorSourceRow[]> {
  return db.selectFrom('mirror_sources').selectAll().orderBy('id').execute()
}

/** The source's row, made on first use. */
export async function ensureSource(db: Store, id: string, kind: MirrorSourceKind, now: string): Promise<MirrorSourceRow> {
  await db
    .insertInto('mirror_sources')
    .values({ id, kind, created_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  const row = (await findSource(db, id))!
  if (row.kind !== kind) {
    await updateSource(db, id, { kind })
    return { ...row, kind }
  }
  return row
}

export type SourceChanges = Omit<Updateable<MirrorSourceTable>, 'id' | 'created_at'>

export async function updateSource(db: Store, id: string, changes: SourceChanges): Promise<void> {
  await db.updateTable('mirror_sources').set(changes).where('id', '=', id).execute()
}

/** Nodes with a version whose archive the source mirrors and this registry does not store (served only through it). */
export async function listNodesServedBySource(db: Store, sourceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('mirror_archives')
    .innerJoin('node_versions', 'node_versions.id', 'mirror_archives.version_id')
    .select('node_versions.node_id')
    .distinct()
    .where('mirror_archives.source_id', '=', sourceId)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb.selectFrom('archives').select('archives.version_id').whereRef('archives.version_id', '=', 'mirror_archives.version_id'),
        ),
      ),
    )
    .orderBy('node_versions.node_id')
    .execute()
  return rows.map((r) => r.node_id)
}
