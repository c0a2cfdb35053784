/** A publisher's page: who they are, their members (names only), and their nodes, a page at a time. */
import type { NodeJson, PublisherJson } from '../domain/wire'
import type { Deps } from '../services/deps'
import { listPublisherNodes } from '../services/node-lists'
import { getPublisher } from '../services/publishers'
import { DateTime, ExternalLink, Pager } from './format'
import type { Links } from './links'
import { NodeCard } from './node-card'
import { loadOrigins, OriginSection, type Origins } from './origin'

export const PUBLISHER_PAGE_SIZE = 50

export interface PublisherView {
  publisher: PublisherJson
  nodes: NodeJson[]
  page: number
  /** Where the publisher and its nodes came from, for those that are mirrored. */
  publisherOrigins: Origins
  nodeOrigins: Origins
}

/** Read as anyone would: the pages have no sign-in, so member emails never show. */
export async function loadPublisherView(deps: Deps, id: string, page: number): Promise<PublisherView> {
  const publisher = await getPublisher(deps, { address: 'web' }, id)
  const nodes = await listPublisherNodes(deps, publisher.id, { includeBanned: false, page, limit: PUBLISHER_PAGE_SIZE })
  const publisherOrigins = await loadOrigins(deps, 'publisher', [publisher.id])
  const ids = nodes.map((n) => n.id)
  const nodeOrigins = await loadOrigins(deps, 'node', ids)
  return { publisher, nodes, page, publisherOrigins, nodeOrigins }
}

export function PublisherPage({ view, links }: { view: PublisherView; links: Links }) {
  const { publisher, nodes, page } = view
  const origin = view.publisherOrigins.of.get(publisher.id)
  const banned = publisher.status === 'PublisherStatusBanned'
  return (
    <>
      <h1>{publisher.name}</h1>
      <p class="muted">
        Publisher <code>{publisher.id}</code> · since <DateTime iso={publisher.createdAt} />
        {banned && (
          <>
            {' '}
            · <span class="badge bad">Banned</span>
          </>
        )}
      </p>
      {publisher.description && <p class="description">{publisher.description}</p>}
      {origin && <OriginSection origin={origin} now={view.publisherOrigins.now} what="publisher" />}
      {/* Only when there is one: an empty list is still announced ("Links, list, 0 items"). */}
      {(publisher.website || publisher.source_code_repo || publisher.support) && (
        <ul class="meta" aria-label="Links">
          {publisher.website && (
            <li>
              Website: <ExternalLink href={publisher.website} />
            </li>
          )}
          {publisher.source_code_repo && (
            <li>
              Source: <ExternalLink href={publisher.source_code_repo} />
            </li>
          )}
          {publisher.support && (
            <li>
              Support: <ExternalLink href={publisher.support} />
            </li>
          )}
        </ul>
      )}
      {publisher.members.length > 0 && (
        <section aria-labelledby="members-heading">
          <h2 id="members-heading">Members</h2>
          <ul>
            {publisher.members.map((m) => (
              <li>
                <bdi>{m.user.name}</bdi> <span class="muted">({m.role})</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="nodes-heading">
        <h2 id="nodes-heading">Nodes</h2>
        {nodes.length ? (
          <ol class="cards">
            {nodes.map((node) => (
              <NodeCard node={node} links={links} origins={view.nodeOrigins} showPublisher={false} />
            ))}
          </ol>
        ) : (
          <p>{page > 1 ? 'No more nodes.' : 'No nodes yet.'}</p>
        )}
        <Pager
          label="Node pages"
          page={page}
          hasNext={nodes.length === PUBLISHER_PAGE_SIZE}
          href={(n) => links.publisher(publisher.id, n)}
        />
      </section>
    </>
  )
}
