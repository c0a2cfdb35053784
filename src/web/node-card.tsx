/** One node in a list (search results, a publisher's nodes): name, id, publisher, excerpt, version, downloads, rating. */
import type { NodeJson } from '../domain/wire'
import { excerpt, plural, rating } from './format'
import type { Links } from './links'

export function NodeCard({ node, links, showPublisher = true }: { node: NodeJson; links: Links; showPublisher?: boolean }) {
  const headingId = `node-${node.id}`
  return (
    <li class="card panel">
      <article aria-labelledby={headingId}>
        <h3 id={headingId}>
          <a href={links.node(node.id)}>{node.name || node.id}</a>
        </h3>
        <p class="muted">
          <code>{node.id}</code>
          {showPublisher && node.publisher && <> by {node.publisher.name}</>}
        </p>
        {node.description && <p>{excerpt(node.description)}</p>}
        <ul class="meta" aria-label="Details">
          <li>{node.latest_version ? `Version ${node.latest_version.version}` : 'No version yet'}</li>
          <li>{plural(node.downloads, 'download')}</li>
          <li>{rating(node)}</li>
        </ul>
      </article>
    </li>
  )
}
