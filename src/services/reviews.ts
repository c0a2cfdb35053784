/** Star ratings: one per user (or, anonymously, per client address) per node; a second replaces the first. */
import type { NodeJson } from '../domain/wire'
import { tooManyRequests, unauthorized } from '../errors'
import { putReview } from '../store/reviews'
import type { Actor } from './access'
import { nodesChanged } from './changes'
import { timestamp, type Deps } from './deps'
import { renderNode, requireNode } from './nodes'

export async function addReview(deps: Deps, actor: Actor, nodeId: string, star: number): Promise<NodeJson> {
  const node = await requireNode(deps, nodeId, { allowBanned: true })
  if (!actor.user && deps.settings.requireReviewAuth) throw unauthorized('Reviews need Authorization: Bearer <token> here')
  if (!actor.user && !deps.reviewLimiter(actor.address, deps.now().getTime())) {
    throw tooManyRequests('Too many reviews from this address; try again later')
  }
  const reviewer = actor.user ? `user:${actor.user.id}` : `addr:${actor.address}`
  await deps.db.transaction().execute((trx) => putReview(trx, { nodeId: node.id, reviewer, star, now: timestamp(deps) }))
  await nodesChanged(deps, [node.id])
  return renderNode(deps, await requireNode(deps, node.id, { allowBanned: true }))
}
