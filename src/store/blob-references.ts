/**
 * The rows that name blob bytes (archives, mirror pins, uploaded images) and the intents that hold them, looked up by
 * SHA-256 for `blobs check` and `blobs sweep` (services/blob-sweep.ts): which of a batch of hashes are referenced, and
 * every hash rows need, in order, to merge with the blob store's listing.
 */
import { sql, type Kysely } from 'kysely'
import type { DB } from './schema'

/** Hashes per statement: an IN list well under SQLite's limit on bound values. */
const CHUNK = 500

/**
 * Which of these hashes a row or an intent (recorded at `intentsSince` or later; with `null`, no intent) names, in one
 * statement per chunk (one snapshot: a writer's transaction that swaps its intent for its row is seen before or after,
 * never half).
 */
export async function referencedAmong(db: Kysely<DB>, sha256s: readonly string[], intentsSince: string | null = ''): Promise<Set<string>> {
  const out = new Set<string>()
  for (let i = 0; i < sha256s.length; i += CHUNK) {
    const part = sha256s.slice(i, i + CHUNK)
    const byRows = db
      .selectFrom('archives')
      .select('sha256')
      .where('sha256', 'in', part)
      // A pin keeps its bytes: a lazy first download binds them instead of fetching them again.
      .union(
        db
          .selectFrom('mirror_archives')
          .select(sql<string>`sha256`.as('sha256'))
          .where('sha256', 'in', part),
      )
      .union(
        db
          .selectFrom('staged_images')
          .select(sql<string>`sha256`.as('sha256'))
          .where('sha256', 'in', part),
      )
    const rows = await (
      intentsSince === null
        ? byRows
        : byRows.union(db.selectFrom('blob_intents').select('sha256').where('sha256', 'in', part).where('created_at', '>=', intentsSince))
    ).execute()
    for (const r of rows) out.add(r.sha256)
  }
  return out
}

/** Which of these hashes are some version's archive here (an import says those apart from the bytes it stores). */
export async function archivedAmong(db: Kysely<DB>, sha256s: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>()
  for (let i = 0; i < sha256s.length; i += CHUNK) {
    const rows = await db
      .selectFrom('archives')
      .select('sha256')
      .distinct()
      .where('sha256', 'in', sha256s.slice(i, i + CHUNK))
      .execute()
    for (const r of rows) out.add(r.sha256)
  }
  return out
}

/** One table's hashes written before `before`, ascending and distinct, a page at a time through its sha256 index. */
async function* hashesOf(db: Kysely<DB>, table: 'archives' | 'staged_images', before: string, pageSize: number): AsyncGenerator<string> {
  const written = table === 'archives' ? 'created_at' : 'uploaded_at'
  let after = ''
  for (;;) {
    const rows = await db
      .selectFrom(table)
      .select(sql<string>`sha256`.as('sha256'))
      .where('sha256', '>', after)
      .where(written, '<', before)
      .orderBy('sha256')
      .limit(pageSize)
      .execute()
    for (const { sha256 } of rows) {
      if (sha256 === after) continue // another row of the same bytes
      // Keyset paging and the merge with the listing need byte order: a collation that sorts hex otherwise is refused.
      if (sha256 < after) throw new Error('the database does not sort SHA-256 hashes in byte order')
      after = sha256
      yield sha256
    }
    if (rows.length < pageSize) return
  }
}

/**
 * The hashes whose bytes rows written before `before` need (archives, uploaded images), ascending and distinct:
 * each table read in pages through its index on sha256 (a union sorted by the database read every row past the
 * page's start on PostgreSQL), the two merged here. Rows written since may name bytes a listing started earlier
 * did not see.
 */
export async function* neededHashes(db: Kysely<DB>, before: string, pageSize = 1000): AsyncGenerator<string> {
  const archives = hashesOf(db, 'archives', before, pageSize)
  const images = hashesOf(db, 'staged_images', before, pageSize)
  let a = (await archives.next()).value as string | undefined
  let i = (await images.next()).value as string | undefined
  while (a !== undefined || i !== undefined) {
    const next = i === undefined || (a !== undefined && a <= i) ? a! : i
    if (a === next) a = (await archives.next()).value as string | undefined
    if (i === next) i = (await images.next()).value as string | undefined
    yield next
  }
}

/** How many archives (versions) and uploaded images written before `before` name these hashes. */
export async function countNeeding(
  db: Kysely<DB>,
  sha256s: readonly string[],
  before: string,
): Promise<{ archives: number; images: number }> {
  let archives = 0
  let images = 0
  for (let i = 0; i < sha256s.length; i += CHUNK) {
    const part = sha256s.slice(i, i + CHUNK)
    const a = await db
      .selectFrom('archives')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('sha256', 'in', part)
      .where('created_at', '<', before)
      .executeTakeFirstOrThrow()
    const m = await db
      .selectFrom('staged_images')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('sha256', 'in', part)
      .where('uploaded_at', '<', before)
      .executeTakeFirstOrThrow()
    archives += Number(a.n)
    images += Number(m.n)
  }
  return { archives, images }
}

/** Up to `limit` versions (node@version) whose archive is one of these hashes, for the operator. */
export async function versionsNaming(
  db: Kysely<DB>,
  sha256s: readonly string[],
  limit: number,
): Promise<{ sha256: string; version: string }[]> {
  if (!sha256s.length) return []
  const rows = await db
    .selectFrom('archives')
    .innerJoin('node_versions', 'node_versions.id', 'archives.version_id')
    .select(['archives.sha256', 'node_versions.node_id', 'node_versions.version', 'node_versions.status'])
    .where('archives.sha256', 'in', sha256s.slice(0, CHUNK))
    .orderBy('node_versions.node_id')
    .orderBy('node_versions.version')
    .limit(limit)
    .execute()
  return rows.map((r) => ({ sha256: r.sha256, version: `${r.node_id}@${r.version} (${r.status})` }))
}
