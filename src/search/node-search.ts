/** The query every node list answers (search, /nodes, publisher lists), and the seam its engines plug into. */

export interface NodeQuery {
  search?: string
  repositoryUrl?: string
  hostNode?: string
  os?: string
  accelerator?: string
  includeBanned: boolean
  /** Only these node ids (any case). */
  nodeIds?: string[]
  /** Only nodes changed after this RFC 3339 instant. */
  changedSince?: string
  offset: number
  limit: number
}

export interface SearchStatus {
  /** Whether the in-memory index answers (false while it warms; the store answers then). */
  ready: boolean
  indexed: number
  engine: string
}

export interface NodeSearch {
  /** Ids of one page of matching nodes, in order, and the total number of matches. */
  find(q: NodeQuery): Promise<{ ids: string[]; total: number }>
  /** Called right after a committed write that touched these nodes. */
  nodesChanged(ids: readonly string[]): void
  status(): SearchStatus
}
