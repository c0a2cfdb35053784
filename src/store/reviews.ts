/** Reviews: one star rating per reviewer per node, with the node's running totals kept in step. */
import type { Store } from './db'
import { lockNodes } from './row-locks'

/**
 * Inserts or replaces the reviewer's rating and adjusts the node's totals. Run inside a transaction. The node's row
 * is held first: on PostgreSQL reviews of one node run side by side, and two that read "no review yet" or the same
 * previous star both inserted (a 500 on the key) or both moved the totals from one starting point (a mean of 14).
 */
export async function putReview(db: Store, review: { nodeId: string; reviewer: string; star: number; now: string }): Promise<void> {
  await lockNodes(db, [review.nodeId])
  const previous = await db
    .selectFrom('reviews')
    .select('star')
    .where('node_id', '=', review.nodeId)
    .where('reviewer', '=', review.reviewer)
    .executeTakeFirst()
  if (previous) {
    await db
      .updateTable('reviews')
      .set({ star: review.star, updated_at: review.now })
      .where('node_id', '=', review.nodeId)
      .where('reviewer', '=', review.reviewer)
      .execute()
  } else {
    await db
      .insertInto('reviews')
      .values({ node_id: review.nodeId, reviewer: review.reviewer, star: review.star, created_at: review.now, updated_at: review.now })
      .execute()
  }
  const starDelta = review.star - (previous?.star ?? 0)
  const countDelta = previous ? 0 : 1
  await db
    .updateTable('nodes')
    .set((eb) => ({
      star_total: eb('star_total', '+', starDelta),
      review_count: eb('review_count', '+', countDelta),
      updated_at: review.now,
    }))
    .where('id', '=', review.nodeId)
    .execute()
}
