/** Which version a node shows as latest_version, kept on the node row and recomputed on every version write. */
import { compareVersions } from '../domain/semver'
import type { Store } from '../store/db'
import { setLatestVersion } from '../store/nodes'
import { lockNodes } from '../store/row-locks'
import type { VersionRow } from '../store/schema'
import { listVersionsOfNode } from '../store/versions'

/** The highest active version; pending or flagged ones count only when no active one exists. */
export function pickLatest<V extends Pick<VersionRow, 'version' | 'status'>>(versions: readonly V[]): V | undefined {
  const active = versions.filter((v) => v.status === 'active')
  const pool = active.length ? active : versions.filter((v) => v.status === 'pending' || v.status === 'flagged')
  return pool.reduce<V | undefined>((best, v) => (!best || compareVersions(v.version, best.version) > 0 ? v : best), undefined)
}

/**
 * In a write, once its version rows are written. The node's row is held before its versions are read: two writes of a
 * node's versions at once on PostgreSQL (two instances) each read them before the other committed, and the last to
 * commit set a latest version chosen without the other's change (a version deleted on one while another was
 * approved on the other left the node on an older one until its versions were next written).
 */
export async function refreshLatest(db: Store, nodeId: string, now: string): Promise<void> {
  await lockNodes(db, [nodeId])
  const latest = pickLatest(await listVersionsOfNode(db, nodeId))
  await setLatestVersion(db, nodeId, latest, now)
}

/** Newest first, by semantic version. */
export const sortVersionsDesc = <V extends Pick<VersionRow, 'version'>>(versions: V[]) =>
  versions.sort((a, b) => compareVersions(b.version, a.version))
