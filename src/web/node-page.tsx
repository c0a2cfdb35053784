/**
 * A node's page: what it is, how to install it from this registry, its versions and host node classes, and the
 * facts beside them. The facts are a list of blocks, so that where a mirrored node came from can join them.
 */
import type { NodeJson, VersionJson } from '../domain/wire'
import type { Deps } from '../services/deps'
import { getNode, getVersionHostNodes, latestInstallableVersion, pageNodeVersions } from '../services/nodes'
import { COMFY_CLI_DEV_REGISTRY, comfyCliCaveat, comfyCliInstall } from './clients'
import { Command, DateTime, ExternalLink, licenseText, Pager, rating, VersionBadges } from './format'
import { count, plural } from '../domain/plural'
import type { Links } from './links'
import { loadOrigins, OriginSection, type Origins } from './origin'

export interface NodeView {
  node: NodeJson
  /** A page of its active, pending and flagged versions, newest first, with the reason a version was flagged. */
  versions: VersionJson[]
  /** Which page of versions, and how many versions there are in all. */
  versionPage: { page: number; total: number }
  /** What an install naming no version gets: the newest active version with an archive here. */
  installable?: VersionJson
  /** Host node classes of the latest version: the first HOST_NODES_SHOWN, and how many there are. */
  hostNodes: { shown: string[]; total: number }
  /** Where the node came from, when it is mirrored. */
  origins: Origins
}

/** Versions a page shows: a node of thousands showed them all, 2 MB of page. */
export const VERSIONS_PAGE_SIZE = 50

/** Host node classes a page lists: an archive may declare 10,000, 16 MB of page rendered at every view. */
export const HOST_NODES_SHOWN = 200

/** Unknown and deleted nodes are 404, banned ones 403 `Node Banned`, as in the API. */
export async function loadNodeView(deps: Deps, id: string, page = 1): Promise<NodeView> {
  const node = await getNode(deps, id)
  const { versions, total } = await pageNodeVersions(deps, node.id, { includeReason: true, page, limit: VERSIONS_PAGE_SIZE })
  const latest = node.latest_version
  const names = latest ? (await getVersionHostNodes(deps, node.id, latest.version)).host_nodes : []
  return {
    node,
    versions,
    versionPage: { page, total },
    installable: await latestInstallableVersion(deps, node.id),
    hostNodes: { shown: names.slice(0, HOST_NODES_SHOWN), total: names.length },
    origins: await loadOrigins(deps, 'node', [node.id]),
  }
}

/** Downloads link by path, so they work whichever address the browser reached this server by. */
const downloadPath = (v: VersionJson) => {
  const url = new URL(v.downloadUrl)
  return url.pathname + url.search
}

/** Anyone may download active and pending versions; a flagged one's archive is refused (its reason is shown instead). */
const downloadable = (v: VersionJson) =>
  Boolean(v.downloadUrl) && (v.status === 'NodeVersionStatusActive' || v.status === 'NodeVersionStatusPending')

function Install({ view, links }: { view: NodeView; links: Links }) {
  const target = view.installable
  const caveat = comfyCliCaveat(links.publicUrl)
  return (
    <section aria-labelledby="install-heading">
      <h2 id="install-heading">Install</h2>
      {target ? (
        <div class="panel">
          <p>With comfy-cli, in your ComfyUI directory:</p>
          <Command id="install-command" text={comfyCliInstall(view.node.id)} label="comfy-cli install command" />
          {caveat && (
            <p class="muted">
              comfy-cli has no registry setting: <code>ENVIRONMENT=dev</code> makes it use <code>{COMFY_CLI_DEV_REGISTRY}</code>. {caveat}
            </p>
          )}
          <div class="actions">
            <a class="button" href={downloadPath(target)} download>
              Download version {target.version}
            </a>
            <a href={links.clients()}>Other clients</a>
          </div>
        </div>
      ) : (
        <p class="notice">No version of this node can be installed yet: none is active with an archive.</p>
      )}
    </section>
  )
}

function Versions({ view, links }: { view: NodeView; links: Links }) {
  const { versions, versionPage } = view
  const pages = Math.ceil(versionPage.total / VERSIONS_PAGE_SIZE)
  return (
    <section aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      {pages > 1 && <p class="muted">{plural(versionPage.total, 'version')}, newest first.</p>}
      {versions.length ? (
        <ol class="versions">
          {versions.map((v) => (
            <li class="panel">
              <article aria-labelledby={`v-${v.version}`}>
                <div class="version-head">
                  <h3 id={`v-${v.version}`}>{v.version}</h3>
                  <VersionBadges version={v} />
                  <span class="muted">
                    <DateTime iso={v.createdAt} />
                  </span>
                  {downloadable(v) && (
                    <a href={downloadPath(v)} download aria-label={`Download ${v.version}`}>
                      Download
                    </a>
                  )}
                </div>
                {v.status_reason && v.status !== 'NodeVersionStatusActive' && <p class="muted">Reason: {v.status_reason}</p>}
                {v.changelog.trim() ? <p class="changelog">{v.changelog}</p> : <p class="muted">No changelog.</p>}
              </article>
            </li>
          ))}
        </ol>
      ) : (
        <p>{versionPage.page > 1 ? 'No more versions.' : 'No versions yet.'}</p>
      )}
      <Pager label="Version pages" page={versionPage.page} pages={pages} href={(n) => links.node(view.node.id, n)} />
    </section>
  )
}

function HostNodes({ view, links }: { view: NodeView; links: Links }) {
  const latest = view.node.latest_version
  const { shown, total } = view.hostNodes
  return (
    <section aria-labelledby="classes-heading">
      <h2 id="classes-heading">Host node classes</h2>
      {latest && shown.length ? (
        <>
          <p class="muted">
            {plural(total, 'class', 'classes')} in version {latest.version}; each link finds every pack that provides it.
            {shown.length < total && (
              <>
                {' '}
                The first {shown.length} are listed here, all of them in <a href={links.hostNodes(view.node.id, latest.version)}>the API</a>
                .
              </>
            )}
          </p>
          <ul class="classes">
            {shown.map((name) => (
              <li>
                <a href={links.home({ host_node_search: name })}>
                  <code>{name}</code>
                </a>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p class="muted">None found in the latest version's archive.</p>
      )}
    </section>
  )
}

const list = (values: string[], none = 'Any') => (values.length ? values.join(', ') : none)

/** The facts beside the page; each entry is a block of its own so others (a mirror's origin) can be added. */
function Facts({ node, links }: { node: NodeJson; links: Links }) {
  const latest = node.latest_version
  return (
    <aside aria-labelledby="facts-heading" class="panel">
      <h2 id="facts-heading">About</h2>
      <dl class="facts">
        <dt>Publisher</dt>
        <dd>{node.publisher ? <a href={links.publisher(node.publisher.id)}>{node.publisher.name}</a> : 'Unknown'}</dd>
        <dt>Latest version</dt>
        <dd>{latest ? latest.version : 'None yet'}</dd>
        <dt>Repository</dt>
        <dd>{node.repository ? <ExternalLink href={node.repository} /> : 'Not stated'}</dd>
        <dt>License</dt>
        <dd>{licenseText(node.license)}</dd>
        <dt>Downloads</dt>
        <dd>{count(node.downloads)}</dd>
        <dt>Rating</dt>
        <dd>{rating(node)}</dd>
        <dt>Operating systems</dt>
        <dd>{list(node.supported_os)}</dd>
        <dt>Accelerators</dt>
        <dd>{list(node.supported_accelerators)}</dd>
        <dt>ComfyUI version</dt>
        <dd>{node.supported_hostui_version || 'Any'}</dd>
        {node.author && (
          <>
            <dt>Author</dt>
            <dd>{node.author}</dd>
          </>
        )}
        {node.tags.length > 0 && (
          <>
            <dt>Tags</dt>
            <dd>
              {node.tags.map((tag, i) => (
                <>
                  {i > 0 && ', '}
                  <bdi>{tag}</bdi>
                </>
              ))}
            </dd>
          </>
        )}
        {latest && latest.dependencies.length > 0 && (
          <>
            <dt>Python dependencies</dt>
            <dd>{latest.dependencies.join(', ')}</dd>
          </>
        )}
        <dt>Listed since</dt>
        <dd>
          <DateTime iso={node.created_at} />
        </dd>
      </dl>
    </aside>
  )
}

export function NodePage({ view, links }: { view: NodeView; links: Links }) {
  const { node } = view
  const latest = node.latest_version
  const origin = view.origins.of.get(node.id)
  return (
    <div class="node-layout">
      <div>
        <h1>{node.name || node.id}</h1>
        <p class="muted">
          <code>{node.id}</code>
          {node.publisher && (
            <>
              {' '}
              by{' '}
              <a href={links.publisher(node.publisher.id)}>
                <bdi>{node.publisher.name}</bdi>
              </a>
            </>
          )}
          {latest && <> · version {latest.version}</>}
        </p>
        {node.description ? <p class="description">{node.description}</p> : <p class="muted">No description.</p>}
        {origin && <OriginSection origin={origin} now={view.origins.now} what="node" />}
        <Install view={view} links={links} />
        <Versions view={view} links={links} />
        <HostNodes view={view} links={links} />
      </div>
      <Facts node={node} links={links} />
    </div>
  )
}
