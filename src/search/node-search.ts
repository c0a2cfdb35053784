/** The seam the node list engines plug into (the in-memory index, and the store while it warms). */
import type { NodeQuery } from '../domain/node-query'

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
  /** Called, and awaited, after a flush of download counts: only these nodes' counts changed, to these values. */
  countsChanged(counts: ReadonlyMap<string, number>): Promise<void>
  /** Called after a write to publishers whose name or members show in their nodes. */
  publishersChanged(ids: readonly string[]): Promise<void>
  status(): SearchStatus
  /** Changes whenever the matches or order of any query may have changed (answers computed before are stale). */
  generation(): number
}
