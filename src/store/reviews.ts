/** Reviews: one star rating per reviewer per node, with the node's running totals kept in step. */
import type { Store } from './db'

/** Inserts or replaces the reviewer's rating and adjusts the node's totals. Run inside a transaction. */
export async function putReview(db: Store, review: { nodeId: string; reviewer: string; star: number; now: string }): Promise<void> {
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
