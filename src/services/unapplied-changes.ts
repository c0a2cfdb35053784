/**
 * Changes this process committed but could not bring its index and caches in step with (the store failed between
 * the commit and the reads that follow it), per store handle. The store's follower skips this process's own serials
 * (services/own-serials.ts), so it applies these itself on its next look: they were otherwise kept out of date until
 * the next change of the same node.
 */
export interface Unapplied {
  nodes: string[]
  publishers: string[]
}

const pending = new WeakMap<object, { nodes: Set<string>; publishers: Set<string> }>()

export const unappliedChanges = {
  keep(db: object, changed: Unapplied): void {
    let held = pending.get(db)
    if (!held) pending.set(db, (held = { nodes: new Set(), publishers: new Set() }))
    for (const id of changed.nodes) held.nodes.add(id)
    for (const id of changed.publishers) held.publishers.add(id)
  },
  /** What is still to apply, now handed to the caller (who keeps it again if it fails too); none when nothing is. */
  take(db: object): Unapplied | undefined {
    const held = pending.get(db)
    pending.delete(db)
    return held && { nodes: [...held.nodes], publishers: [...held.publishers] }
  },
}
