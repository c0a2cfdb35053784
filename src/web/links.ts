/**
 * Where the pages live, and every link between them. Pages are `/` and paths under `/-/`, which no API route
 * can take (node, publisher and version ids never start with `-`); every href, asset and form action carries
 * the path of the public URL, so the pages work behind a reverse proxy that serves the registry under a prefix.
 */

export const PAGE_PREFIX = '/-'

/** Whether a path (as routed here, without the public URL's prefix) belongs to the pages rather than the JSON API. */
export const isPagePath = (path: string) => path === '/' || path === PAGE_PREFIX || path.startsWith(`${PAGE_PREFIX}/`)

/** A search as the pages and `GET /nodes/search` both spell it. */
export interface SearchQuery {
  search?: string
  repository_url_search?: string
  host_node_search?: string
  supported_os?: string
  supported_accelerator?: string
  page?: number
  limit?: number
}

export const DEFAULT_PAGE_SIZE = 20

export interface Links {
  /** The public URL, for commands and addresses shown to people. */
  readonly publicUrl: string
  home(query?: SearchQuery): string
  /** The live-search fragment of the home page. */
  results(): string
  /** A node's page; `page`: which page of its versions. */
  node(id: string, page?: number): string
  publisher(id: string, page?: number): string
  clients(): string
  asset(name: string): string
  /** The same search against the JSON API. */
  apiSearch(query: SearchQuery): string
  /** The host node classes of a version, from the JSON API. */
  hostNodes(id: string, version: string): string
  openapi(): string
}

/** A query string with only what differs from the defaults, in a stable order. */
export function searchString(query: SearchQuery, defaultLimit = DEFAULT_PAGE_SIZE): string {
  const params = new URLSearchParams()
  for (const key of ['search', 'repository_url_search', 'host_node_search', 'supported_os', 'supported_accelerator'] as const) {
    const value = query[key]?.trim()
    if (value) params.set(key, value)
  }
  if (query.limit !== undefined && query.limit !== defaultLimit) params.set('limit', String(query.limit))
  if (query.page !== undefined && query.page > 1) params.set('page', String(query.page))
  const text = params.toString()
  return text ? `?${text}` : ''
}

const pageString = (page: number) => (page > 1 ? `?page=${page}` : '')

export function createLinks(publicUrl: string): Links {
  const base = new URL(publicUrl).pathname.replace(/\/+$/, '')
  const seg = encodeURIComponent
  return {
    publicUrl,
    home: (query = {}) => `${base}/${searchString(query)}`,
    results: () => `${base}${PAGE_PREFIX}/results`,
    node: (id, page = 1) => `${base}${PAGE_PREFIX}/nodes/${seg(id)}${pageString(page)}`,
    publisher: (id, page = 1) => `${base}${PAGE_PREFIX}/publishers/${seg(id)}${pageString(page)}`,
    clients: () => `${base}${PAGE_PREFIX}/clients`,
    asset: (name) => `${base}${PAGE_PREFIX}/assets/${seg(name)}`,
    apiSearch: (query) => `${base}/nodes/search${searchString(query, 10)}`,
    hostNodes: (id, version) => `${base}/nodes/${seg(id)}/versions/${seg(version)}/host-nodes`,
    openapi: () => `${base}/openapi`,
  }
}
