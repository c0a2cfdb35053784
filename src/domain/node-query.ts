/** The query every node list answers (search, /nodes, a publisher's nodes): filters, order and paging. */

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
