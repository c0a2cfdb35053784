/**
 * A source's archive mode, which each sync sets: `none` serves none of its mirrored archives, `lazy` and `eager`
 * serve them. Where that flips, every node with a mirrored archive not stored here shows the change (its latest
 * version's `downloadUrl`, its version list, its install answer), so those nodes are written as changed, a batch at
 * a time: every process's caches and any mirror of this registry follow, as a fresh process would answer.
 */
import { listNodesServedBySource, updateSource } from '../../store/mirror-sources'
import type { ArchiveMode, MirrorSourceRow } from '../../store/schema'
import { commitWrite } from '../changes'
import type { Deps } from '../deps'

const NODES_PER_WRITE = 500

const serves = (mode: ArchiveMode) => mode !== 'none'

export async function setArchiveMode(deps: Deps, source: MirrorSourceRow, mode: ArchiveMode): Promise<void> {
  if (serves(source.archives) === serves(mode)) return updateSource(deps.db, source.id, { archives: mode })
  const nodes = await listNodesServedBySource(deps.db, source.id)
  // The mode with the first batch of its nodes; the rest after it (caches only: the store is right from the first).
  for (let i = 0; i === 0 || i < nodes.length; i += NODES_PER_WRITE) {
    await commitWrite(deps, async (w) => {
      if (i === 0) await updateSource(w.db, source.id, { archives: mode })
      for (const id of nodes.slice(i, i + NODES_PER_WRITE)) w.node(id)
    })
  }
}
