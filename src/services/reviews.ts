/** Star ratings: one per user (or, anonymously, per client address) per node; a second replaces the first. */
import type { NodeJson } from '../domain/wire'
import { tooManyRequests, unauthorized } from '../errors'
import { putReview } from '../store/reviews'
import { type Actor, requireActiveUser, requireLocal } from './access'
import { commitWrite } from './changes'
import type { Deps } from './deps'
import { renderNode, requireNode } from './nodes'

export async function addReview(deps: Deps, actor: Actor, nodeId: string, star: number): Promise<NodeJson> {
  const node = await requireNode(deps, nodeId, { allowBanned: true })
  // A mirrored node shows its upstream's rating; reviews belong there.
  await requireLocal(deps.db, { nodeId: node.id })
  // A credential that was sent must be good, and its user not banned; no credential is an anonymous review.
  if (actor.user || actor.credentialProblem) requireActiveUser(actor)
  else if (deps.settings.requireReviewAuth) throw unauthorized('Reviews need Authorization: Bearer <token> here')
  else {
    const waitMs = await deps.reviewLimiter(actor.address, deps.now().getTime())
    if (waitMs > 0) throw tooManyRequests('Too many reviews from this address; try again later', waitMs / 1000)
  }
  const reviewer = actor.user ? `user:${actor.user.id}` : `addr:${actor.address}`
  await commitWrite(deps, async (w) => {
    await putReview(w.db, { nodeId: node.id, reviewer, star, now: w.now })
    w.node(node.id)
  })
  return renderNode(deps, await requireNode(deps, node.id, { allowBanned: true }))
}
