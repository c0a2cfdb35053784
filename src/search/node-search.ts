/** The query every node list answers (search, /nodes), and the seam its engines plug into. */

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
  /** Nodes the index holds. */
  indexed: number
  engine: 'index' | 'store'
}

export interface NodeSearch {
  /** Ids of one page of matching nodes, in order, and the total number of matches. */
  find(q: NodeQuery): Promise<{ ids: string[]; total: number }>
  /** The node that provides a host node class of this name (ignoring case), best ranked first. */
  hostNodeOwner(name: string): Promise<string | undefined>
  /** Called, and awaited, right after a committed write that touched these nodes. */
  nodesChanged(ids: readonly string[]): Promise<void>
  /** Called after a write to publishers whose name or members show in their nodes. */
  publishersChanged(ids: readonly string[]): Promise<void>
  status(): SearchStatus
}
