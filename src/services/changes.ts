/**
 * The one way services announce a committed write: the search index and the JSON caches follow before the
 * write answers. The caches move on only after the index did, so that nothing rendered from the old index
 * state can be kept as current.
 */
import type { Deps } from './deps'

export async function nodesChanged(deps: Pick<Deps, 'search' | 'nodeJson'>, ids: readonly string[]): Promise<void> {
  await deps.search.nodesChanged(ids)
  deps.nodeJson.nodesChanged(ids)
}

export async function publishersChanged(deps: Pick<Deps, 'search' | 'nodeJson'>, ids: readonly string[]): Promise<void> {
  await deps.search.publishersChanged(ids)
  deps.nodeJson.publishersChanged()
}
