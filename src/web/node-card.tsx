/**
 * One node in a list (search results, a publisher's nodes): name, id, publisher, excerpt, version, downloads,
 * rating, and where a mirrored node came from.
 */
import type { NodeJson } from '../domain/wire'
import { excerpt, rating } from './format'
import { plural } from '../domain/plural'
import type { Links } from './links'
import { OriginLine, type Origins } from './origin'

export function NodeCard({
  node,
  links,
  origins,
  showPublisher = true,
}: {
  node: NodeJson
  links: Links
  origins: Origins
  showPublisher?: boolean
}) {
  const headingId = `node-${node.id}`
  const origin = origins.of.get(node.id)
  return (
    <li class="card panel">
      <article aria-labelledby={headingId}>
        <h3 id={headingId}>
          <a href={links.node(node.id)}>{node.name || node.id}</a>
        </h3>
        <p class="muted">
          <code>{node.id}</code>
          {showPublisher && node.publisher && (
            <>
              {' '}
              by <bdi>{node.publisher.name}</bdi>
            </>
          )}
        </p>
        {node.description && <p>{excerpt(node.description)}</p>}
        <ul class="meta" aria-label="Details">
          <li>{node.latest_version ? `Version ${node.latest_version.version}` : 'No version yet'}</li>
          <li>{plural(node.downloads, 'download')}</li>
          <li>{rating(node)}</li>
          {origin && <OriginLine origin={origin} now={origins.now} />}
        </ul>
      </article>
    </li>
  )
}
