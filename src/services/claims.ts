/**
 * Claim-my-node: the owner of a repository moves its node from the unclaimed publisher (where legacy nodes
 * were imported) to a publisher of theirs, proving ownership with a token of the source-code host. The token
 * is used for the host's calls and dropped: never stored, logged or echoed.
 */
import { parseRepository } from '../domain/repository'
import { badRequest, nodeBanned, nodeClaimed, notFound, publisherBanned, tooManyRequests } from '../errors'
import { findNode, moveNode } from '../store/nodes'
import type { NodeRow } from '../store/schema'
import { type Actor, holdPublisherForNode, requireRole } from './access'
import { commitWrite } from './changes'
import type { Deps } from './deps'

/** Claims that ask the repository host, per user and window (a publisher claiming all of its packs at once fits). */
export const CLAIMS_PER_WINDOW = 30
export const CLAIM_WINDOW_MS = 10 * 60_000

/** The node while it can be claimed: known, not deleted, still the unclaimed publisher's, not banned. */
function requireClaimable(node: NodeRow | undefined, unclaimed: string, nodeId: string): NodeRow {
  if (!node || node.status === 'deleted') throw notFound(`node "${nodeId}" not found`)
  if (node.publisher_id !== unclaimed) throw nodeClaimed()
  if (node.status === 'banned') throw nodeBanned()
  return node
}

export async function claimNode(deps: Deps, actor: Actor, path: { publisherId: string; nodeId: string }, token: string | undefined) {
  await requireRole(deps.db, actor, path.publisherId, 'owner')
  if (!token) throw badRequest('REPOHOST_TOKEN: a token of the repository host is required (GH_TOKEN is accepted too)')
  const unclaimed = deps.settings.unclaimedPublisherId
  if (path.publisherId === unclaimed) throw badRequest('nodes are claimed into a publisher of yours, not into the unclaimed publisher')
  const node = requireClaimable(await findNode(deps.db, path.nodeId), unclaimed, path.nodeId)
  const repo = parseRepository(node.repository, deps.repoHost.webBase)
  if (!repo) {
    const url = node.repository ? `"${node.repository}"` : 'empty'
    throw badRequest(
      `the repository URL of node "${node.id}" (${url}) names no repository on ${deps.repoHost.webBase}`,
      'invalid_repository',
    )
  }
  // Each claim asks the repository host up to three times: bounded per user, so no one makes the registry hammer it.
  const waitMs = await deps.claimLimiter(actor.user!.id, deps.now().getTime())
  if (waitMs > 0) throw tooManyRequests('Too many claims; try again later', waitMs / 1000)
  const { login } = await deps.repoHost.verifyAdmin(token, repo)
  await commitWrite(deps, async (w) => {
    // The publisher deleted or banned on another instance since requireRole above: refused, as it would have been.
    await holdPublisherForNode(w.db, path.publisherId, publisherBanned)
    // The update decides between concurrent claims: only the first still finds the node unclaimed.
    if (!(await moveNode(w.db, node.id, { from: unclaimed, to: path.publisherId, statuses: ['active'] }, w.now))) {
      requireClaimable(await findNode(w.db, node.id), unclaimed, path.nodeId)
      throw nodeClaimed()
    }
    w.node(node.id)
    w.audit(actor, {
      action: 'node.claim',
      targetKind: 'node',
      targetId: node.id,
      before: { publisher: unclaimed },
      after: { publisher: path.publisherId, repository: `${repo.owner}/${repo.repo}`, host: deps.repoHost.webBase, host_user: login },
    })
  })
  deps.log.info('node.claimed', { node: node.id, publisher: path.publisherId, repository: `${repo.owner}/${repo.repo}`, host_user: login })
}
