/** The home page: a search form with the parameters of `GET /nodes/search`, its results, and paging. */
import type { Context } from 'hono'
import * as v from 'valibot'
import type { NodePage } from '../domain/wire'
import { q, queryParams, SEARCH_FILTERS } from '../http/validate'
import type { Deps } from '../services/deps'
import { findNodes } from '../services/node-lists'
import { isolated, paged, Pager } from './format'
import { count, plural } from '../domain/plural'
import { DEFAULT_PAGE_SIZE, type Links, type SearchQuery } from './links'
import { NodeCard } from './node-card'
import { documentTitle } from './layout'
import { loadOrigins, type Origins } from './origin'

const MAX_PAGE_SIZE = 100

const SearchParams = v.object({
  ...SEARCH_FILTERS,
  page: q.int(1, 1),
  limit: q.int(1, DEFAULT_PAGE_SIZE),
})

/** The request's search, validated as the API validates it (400 naming the parameter otherwise). */
export function readSearch(c: Context): SearchQuery & { page: number; limit: number } {
  const p = queryParams(c, SearchParams)
  return {
    search: p.search || undefined,
    repository_url_search: p.repository_url_search || undefined,
    host_node_search: p.host_node_search || p.comfy_node_search || undefined,
    supported_os: p.supported_os || undefined,
    supported_accelerator: p.supported_accelerator || undefined,
    page: p.page,
    limit: Math.min(p.limit, MAX_PAGE_SIZE),
  }
}

/** A page of results, and where its mirrored nodes came from (one lookup for the page). */
export interface Found {
  page: NodePage
  origins: Origins
}

export async function runSearch(deps: Deps, query: ReturnType<typeof readSearch>): Promise<Found> {
  const page = await findNodes(deps, {
    page: query.page,
    limit: query.limit,
    search: query.search,
    repositoryUrl: query.repository_url_search,
    hostNode: query.host_node_search,
    os: query.supported_os,
    accelerator: query.supported_accelerator,
    includeBanned: false,
  })
  const ids = page.nodes.map((n) => n.id)
  return { page, origins: await loadOrigins(deps, 'node', ids) }
}

/** Values the publishing CLI derives from package classifiers; any other text works too. */
const OS_VALUES = ['OS Independent', 'Microsoft :: Windows', 'POSIX :: Linux', 'MacOS']
const ACCELERATOR_VALUES = ['GPU :: NVIDIA CUDA', 'GPU :: AMD ROCm', 'GPU :: Intel Arc', 'GPU :: Apple Metal', 'NPU :: Huawei Ascend']

const filtered = (q: SearchQuery) =>
  Boolean(q.search || q.repository_url_search || q.host_node_search || q.supported_os || q.supported_accelerator)

/**
 * The page's title: the keyword, whether filters narrow it, which page of results. A link to a host node class lands
 * on a filtered search, which "Browse nodes" (the whole list's title) misnamed.
 */
export function searchTitle(query: SearchQuery): string {
  const { search } = query
  const narrowed = filtered({ ...query, search: undefined })
  const what = search ? `Nodes matching “${isolated(search)}”${narrowed ? ', filtered' : ''}` : narrowed ? 'Filtered nodes' : 'Browse nodes'
  return paged(what, query.page)
}

const Field = (props: { name: keyof SearchQuery; label: string; value?: string; hint?: string; list?: string }) => (
  <div class="field">
    <label for={`f-${props.name}`}>{props.label}</label>
    <input
      id={`f-${props.name}`}
      name={props.name}
      value={props.value ?? ''}
      list={props.list}
      placeholder={props.hint}
      autocomplete="off"
      spellcheck={false}
    />
  </div>
)

/** The results block: what the page shows, and what the script swaps in as the person types. */
export function Results({ found, links, query }: { found: Found; links: Links; query: SearchQuery }) {
  const { page, origins } = found
  const summary = filtered(query) ? `${plural(page.total, 'node')} found` : `All ${plural(page.total, 'node')}`
  return (
    <>
      {/* The title goes with the results the script swaps in, so that the tab and the address agree. */}
      <div class="results-head" data-title={documentTitle(searchTitle(query))}>
        <h2 id="results-heading" data-summary>
          {summary}
        </h2>
        <a href={links.apiSearch(query)}>This search in the JSON API</a>
      </div>
      {page.nodes.length ? (
        <ol class="cards">
          {page.nodes.map((node) => (
            <NodeCard node={node} links={links} origins={origins} />
          ))}
        </ol>
      ) : (
        <p>
          {page.total > 0 ? 'This page is past the last result. ' : 'No node matches this search. '}
          <a href={links.home(page.total > 0 ? { ...query, page: 1 } : {})}>{page.total > 0 ? 'Go to the first page' : 'Show all nodes'}</a>
        </p>
      )}
      <Pager label="Result pages" page={page.page} pages={page.totalPages} href={(n) => links.home({ ...query, page: n })} />
    </>
  )
}

/** A search the server could not run (a filter too long, a page that is not a number), in the results block. */
export const ResultsProblem = ({ message }: { message: string }) => (
  <p class="notice" data-summary>
    {message}
  </p>
)

export function SearchPage({ found, links, query }: { found: Found; links: Links; query: SearchQuery }) {
  return (
    <>
      <h1>Find a node</h1>
      <p class="lead">Search every pack this registry serves, by keyword or by what it needs and provides.</p>
      <form class="search panel" role="search" aria-label="Nodes" method="get" action={links.home()} data-results={links.results()}>
        <div class="field">
          <label for="f-search">Keyword</label>
          <div class="keyword">
            <input
              id="f-search"
              type="search"
              name="search"
              value={query.search ?? ''}
              placeholder="name, description, author, tag or publisher"
              autocomplete="off"
            />
            <button type="submit">Search</button>
          </div>
        </div>
        <fieldset class="plain">
          <legend>Narrow the results</legend>
          <div class="filters">
            <Field name="repository_url_search" label="Repository" value={query.repository_url_search} hint="github.com/owner/repo" />
            <Field name="host_node_search" label="Host node class" value={query.host_node_search} hint="e.g. KSampler" />
            <Field name="supported_os" label="Operating system" value={query.supported_os} list="os-values" hint="e.g. POSIX :: Linux" />
            <Field
              name="supported_accelerator"
              label="Accelerator"
              value={query.supported_accelerator}
              list="accelerator-values"
              hint="e.g. GPU :: AMD ROCm"
            />
          </div>
        </fieldset>
        {query.limit !== DEFAULT_PAGE_SIZE && <input type="hidden" name="limit" value={String(query.limit)} />}
        <datalist id="os-values">
          {OS_VALUES.map((value) => (
            <option value={value} />
          ))}
        </datalist>
        <datalist id="accelerator-values">
          {ACCELERATOR_VALUES.map((value) => (
            <option value={value} />
          ))}
        </datalist>
      </form>
      <p id="results-status" class="sr-only" role="status" aria-live="polite"></p>
      <section id="results" aria-labelledby="results-heading" tabindex={-1}>
        <Results found={found} links={links} query={query} />
      </section>
    </>
  )
}
