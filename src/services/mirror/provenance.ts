/**
 * Where mirrored publishers and nodes came from, and how fresh that upstream is, for the pages: one query per list
 * of entities (never one per entity); whether this server follows the upstream comes from the in-memory freshness.
 */
import { listOriginSources } from '../../store/mirror-entities'
import type { MirrorSourceKind } from '../../store/schema'
import type { Deps } from '../deps'
import type { UpstreamState } from './runtime'

export interface Upstream {
  /** The upstream's base URL, or `bundle:<instance id>` for imported bundles (data from elsewhere either way). */
  id: string
  kind: MirrorSourceKind
  /** The instance id the upstream or bundle gave itself; may be empty. */
  instance: string
  /** When a sync or import from it last completed; null while none has. */
  lastSuccessAt: string | null
  lastAttemptAt: string | null
  /** Present when `serve --sync-from` follows this upstream: how that is going. */
  followed?: UpstreamState
}

export interface Provenance {
  upstream: Upstream
}

/** The followed upstream's state; `stale` until the freshness snapshot knows it (no sync has recorded it yet). */
function followedState(deps: Pick<Deps, 'mirror'>, sourceId: string): UpstreamState | undefined {
  const following = deps.mirror?.following
  if (!following || following !== sourceId) return undefined
  const fresh = deps.mirror?.freshness()
  return fresh?.upstream === following ? fresh.state : 'stale'
}

/** Provenance of the mirrored ones among these publishers or nodes, by id; local ones are absent. */
export async function describeOrigins(
  deps: Pick<Deps, 'db' | 'mirror'>,
  kind: 'publisher' | 'node',
  ids: readonly string[],
): Promise<Map<string, Provenance>> {
  const out = new Map<string, Provenance>()
  if (!ids.length) return out
  const upstreams = new Map<string, Upstream>()
  for (const row of await listOriginSources(deps.db, kind, [...new Set(ids)])) {
    let upstream = upstreams.get(row.id)
    if (!upstream) {
      upstream = {
        id: row.id,
        kind: row.kind,
        instance: row.upstream_instance,
        lastSuccessAt: row.last_success_at,
        lastAttemptAt: row.last_attempt_at,
        followed: followedState(deps, row.id),
      }
      upstreams.set(row.id, upstream)
    }
    out.set(row.entity_id, { upstream })
  }
  return out
}

export interface MirrorStatus {
  /** The upstream `--sync-from` names. */
  upstream: string
  state: UpstreamState
  lastSuccessAt: string | null
  lastAttemptAt: string | null
}

/** The registry's own mirror state while `serve --sync-from` runs (from memory: no query); undefined otherwise. */
export function mirrorStatus(deps: Pick<Deps, 'mirror'>): MirrorStatus | undefined {
  const following = deps.mirror?.following
  if (!following) return undefined
  const fresh = deps.mirror?.freshness()
  if (fresh?.upstream !== following) return { upstream: following, state: 'stale', lastSuccessAt: null, lastAttemptAt: null }
  return { upstream: following, state: fresh.state, lastSuccessAt: fresh.lastSuccessAt, lastAttemptAt: fresh.lastAttemptAt }
}
