/**
 * Schema version 15: review totals that do not match their reviews computed again. Before reviews held their node's
 * row, reviews sent at once on PostgreSQL could move the totals from one starting point (a mean of 14 on a 1-5
 * scale), and totals are kept, never recomputed. Those nodes' stored documents (which show the rating) are dropped:
 * serve renders such nodes from their rows and writes their documents again; each gets a change-feed serial, as a
 * write would. No table changes.
 */
import { sql, type Kysely } from 'kysely'
import type { MigrationContext } from './migration'

export async function up(db: Kysely<any>, ctx: MigrationContext): Promise<void> {
  const wrong = await sql<{ id: string; star_total: number; review_count: number }>`
    select nodes.id, coalesce(sum(reviews.star), 0) as star_total, count(reviews.star) as review_count
    from nodes left join reviews on reviews.node_id = nodes.id
    group by nodes.id, nodes.star_total, nodes.review_count
    having nodes.star_total <> coalesce(sum(reviews.star), 0) or nodes.review_count <> count(reviews.star)`.execute(db)
  if (!wrong.rows.length) return
  // Reserved as every write reserves its serials (store/changes.ts): the counter row stays locked until this commits,
  // so an instance of the previous release writing meanwhile (a rolling upgrade on PostgreSQL) takes the serials
  // after these. Read, then set at the end, serials that instance took in between were given again.
  const reserved = await db
    .updateTable('registry_instance')
    .set((eb) => ({ last_serial: eb('last_serial', '+', wrong.rows.length) }))
    .where('id', '=', 1)
    .returning('last_serial')
    .executeTakeFirstOrThrow()
  let serial = Number(reserved.last_serial) - wrong.rows.length
  for (const node of wrong.rows) {
    await db
      .updateTable('nodes')
      .set({ star_total: Number(node.star_total), review_count: Number(node.review_count), updated_at: ctx.now })
      .where('id', '=', node.id)
      .execute()
    await db.deleteFrom('node_documents').where('node_id', '=', node.id).execute()
    // A change like any write's, so that followers and bundles carry the right rating too.
    await db.deleteFrom('changes').where('kind', '=', 'node').where('entity_id', '=', node.id).execute()
    await db.insertInto('changes').values({ serial: ++serial, kind: 'node', entity_id: node.id, changed_at: ctx.now }).execute()
  }
}
