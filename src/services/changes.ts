/** The one way services announce a committed write: the search index and the JSON cache follow at once. */
import type { Deps } from './deps'

export async function nodesChanged(deps: Pick<Deps, 'search' | 'nodeJson'>, ids: readonly string[]): Promise<void> {
  deps.nodeJson.nodesChanged(ids)
  await deps.search.nodesChanged(ids)
}

export async function publishersChanged(deps: Pick<Deps, 'search' | 'nodeJson'>, ids: readonly string[]): Promise<void> {
  deps.nodeJson.publishersChanged()
  await deps.search.publishersChanged(ids)
}
