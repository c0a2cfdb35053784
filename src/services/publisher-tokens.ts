/** Publisher access tokens: created by an owner, shown once, listed masked, checked at publish. */
import { hashToken, maskToken, newId, newSecretToken } from '../domain/ids'
import { badRequest, notFound } from '../errors'
import { deletePublisherToken, insertPublisherToken, listPublisherTokens, publisherTokenMatches } from '../store/publisher-tokens'
import { type Actor, requireLocal, requireRole } from './access'
import { commitWrite } from './changes'
import type { Deps } from './deps'

export async function createPublisherToken(
  deps: Deps,
  actor: Actor,
  publisherId: string,
  input: { name?: string; description?: string },
): Promise<{ token: string }> {
  await requireRole(deps.db, actor, publisherId, 'owner')
  await requireLocal(deps.db, { publisherId })
  const name = input.name?.trim()
  if (!name) throw badRequest('name: a token name is required')
  const token = newSecretToken()
  const id = newId()
  await commitWrite(deps, async (w) => {
    await insertPublisherToken(w.db, {
      id,
      publisher_id: publisherId,
      name,
      description: input.description ?? '',
      token_hash: hashToken(token),
      token_prefix: token.slice(0, 4),
      created_at: w.now,
    })
    w.audit(actor, { action: 'publisher_token.create', targetKind: 'publisher', targetId: publisherId, after: { id, name } })
  })
  return { token }
}

export async function listTokens(deps: Deps, actor: Actor, publisherId: string) {
  await requireRole(deps.db, actor, publisherId, 'owner')
  const rows = await listPublisherTokens(deps.db, publisherId)
  return rows.map((t) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    createdAt: t.created_at,
    token: maskToken(t.token_prefix),
  }))
}

export async function deleteToken(deps: Deps, actor: Actor, publisherId: string, tokenId: string) {
  await requireRole(deps.db, actor, publisherId, 'owner')
  await requireLocal(deps.db, { publisherId })
  await commitWrite(deps, async (w) => {
    // Scoped to the publisher of the path: another publisher's token id is simply not found here.
    if (!(await deletePublisherToken(w.db, publisherId, tokenId))) throw notFound(`token "${tokenId}" not found`)
    w.audit(actor, { action: 'publisher_token.delete', targetKind: 'publisher', targetId: publisherId, before: { id: tokenId } })
  })
}

export const publisherTokenValid = (deps: Deps, publisherId: string, token: string) =>
  publisherTokenMatches(deps.db, publisherId, hashToken(token))
