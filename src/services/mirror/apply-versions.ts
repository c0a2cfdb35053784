/** The versions of a mirrored batch: rows, host node names, where their archives are upstream (and pins), gone versions, latest. */
import type { VersionItem } from '../../domain/mirror-items'
import { listMirrorArchives, listOrigins, putMirrorArchives } from '../../store/mirror-entities'
import { setLatestVersion } from '../../store/nodes'
import { listArchives, listVersionsByIds } from '../../store/versions'
import { pickLatest } from '../latest'
import { type Batch, keptStatus, originKey, recordOrigin } from './apply'
import { batches, differs, versionRow } from './rows'

const sameNames = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i])

async function siblingsOf(b: Batch, nodeIds: string[]) {
  if (!nodeIds.length) return []
  return b.w.db.selectFrom('node_versions').select(['id', 'node_id', 'version', 'status']).where('node_id', 'in', nodeIds).execute()
}

async function currentHostNodes(b: Batch, versionIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (!versionIds.length) return out
  for (const r of await b.w.db.selectFrom('host_nodes').select(['version_id', 'name']).where('version_id', 'in', versionIds).execute()) {
    ;(out.get(r.version_id) ?? out.set(r.version_id, []).get(r.version_id)!).push(r.name)
  }
  return out
}

type ArchiveRow = Awaited<ReturnType<typeof listMirrorArchives>>[number]

/**
 * Where the archive is upstream, and its pin: a different SHA-256 announced for a pinned version is refused.
 * Returns the row to write (undefined when nothing changed) and whether the version's rendering changes.
 */
function archiveChange(b: Batch, v: VersionItem, current: ArchiveRow | undefined): { row?: ArchiveRow; visible: boolean } {
  if (!v.archiveUrl) return { visible: false }
  if (!current) {
    const row = { version_id: v.id, source_id: b.opts.sourceId, url: v.archiveUrl, sha256: v.archiveSha256 ?? null }
    return { row: { ...row, size_bytes: null, etag: null, problem: '', problem_at: null }, visible: true }
  }
  let { sha256, problem, problem_at } = current
  if (v.archiveSha256 && sha256 && v.archiveSha256 !== sha256) {
    problem = `the upstream now announces other bytes (SHA-256 ${v.archiveSha256}) than the ones pinned here (${sha256}): refused`
    problem_at = b.w.now
    if (problem !== current.problem) b.result.problems.push({ kind: 'archive', id: v.id, reason: problem })
  } else sha256 ??= v.archiveSha256 ?? null
  const next = { ...current, url: v.archiveUrl, source_id: b.opts.sourceId, sha256, problem, problem_at }
  if (!differs(current, next)) return { visible: false }
  return { row: next, visible: next.url !== current.url || next.problem !== current.problem }
}

export async function applyVersions(b: Batch, all: VersionItem[]): Promise<void> {
  const items = [...new Map(all.map((v) => [v.id, v])).values()]
  const complete = b.opts.completeVersionLists ?? new Set<string>()
  const nodeIds = [...new Set([...items.map((v) => v.node_id), ...complete])]
  if (!nodeIds.length) return
  const db = b.w.db
  const nodes = new Map(
    (await db.selectFrom('nodes').select(['id', 'latest_version_id', 'latest_version_status']).where('id', 'in', nodeIds).execute()).map(
      (n) => [n.id, n],
    ),
  )
  // Mirrored nodes: recorded before, or in this batch (its origins are written at its end).
  const nodeOrigins = new Set((await listOrigins(db, 'node', nodeIds)).map((o) => o.entity_id))
  for (const o of b.newOrigins) if (o.kind === 'node') nodeOrigins.add(o.entity_id)
  const ids = items.map((v) => v.id)
  const [current, siblings, hostNodes, archives, stored] = await Promise.all([
    listVersionsByIds(db, ids).then((rows) => new Map(rows.map((r) => [r.id, r]))),
    siblingsOf(b, nodeIds),
    currentHostNodes(
      b,
      items.filter((v) => v.hostNodes).map((v) => v.id),
    ),
    listMirrorArchives(db, ids).then((rows) => new Map(rows.map((r) => [r.version_id, r]))),
    b.opts.localArchives
      ? listArchives(db, ids).then((rows) => new Map(rows.map((r) => [r.version_id, r.sha256])))
      : new Map<string, string>(),
  ])
  const byVersion = new Map(siblings.map((s) => [`${s.node_id}\n${s.version}`, s.id]))
  const touched = new Set<string>()
  const inserts: ReturnType<typeof versionRow>[] = []
  const updates: ReturnType<typeof versionRow>[] = []
  const hostNodeRows: { version_id: string; name: string }[] = []
  const replacedHostNodes: string[] = []
  const archiveRows: ArchiveRow[] = []
  const localArchiveRows: { version_id: string; sha256: string; size_bytes: number; format: 'zip' | 'tar.gz'; created_at: string }[] = []
  for (const v of items) {
    const problem = (reason: string) => b.result.problems.push({ kind: 'version', id: v.id, reason })
    if (b.opts.skipped.nodes.has(v.node_id)) {
      problem(`its node "${v.node_id}" was skipped`)
      continue
    }
    if (!nodes.has(v.node_id)) {
      b.result.held.push(v)
      continue
    }
    const cur = current.get(v.id)
    const origin = b.origins.get(originKey('version', v.id))
    const twin = byVersion.get(`${v.node_id}\n${v.version}`)
    if (!nodeOrigins.has(v.node_id)) problem(`its node "${v.node_id}" is a local node here`)
    else if (cur && !origin) problem('a local version has this id')
    else if (cur && cur.node_id !== v.node_id) problem(`it belongs to node "${cur.node_id}" here, not "${v.node_id}"`)
    else if (twin && twin !== v.id) problem(`version ${v.version} of "${v.node_id}" exists here with another id`)
    else {
      byVersion.set(`${v.node_id}\n${v.version}`, v.id)
      const row = versionRow(v, keptStatus(cur, origin, v.status), b.w.now)
      recordOrigin(b, 'version', v.id, { status: v.status, hostNodes: v.hostNodes !== undefined })
      let changed = !cur || differs(cur, row)
      if (changed) (cur ? updates : inserts).push(row)
      if (v.hostNodes && !sameNames(hostNodes.get(v.id) ?? [], v.hostNodes)) {
        if (cur) replacedHostNodes.push(v.id)
        for (const name of new Set(v.hostNodes)) hostNodeRows.push({ version_id: v.id, name })
        changed = true
      }
      const archive = archiveChange(b, v, archives.get(v.id))
      if (archive.row) archiveRows.push(archive.row)
      // Bytes carried here (an import): they become the version's archive, unless another one is pinned.
      const local = v.archiveSha256 ? b.opts.localArchives?.get(v.archiveSha256) : undefined
      const pinned = stored.get(v.id)
      if (local && pinned && pinned !== v.archiveSha256) {
        problem(`the archive carried here (SHA-256 ${v.archiveSha256}) is not the one pinned here (${pinned}): refused`)
      } else if (local && !pinned) {
        localArchiveRows.push({
          version_id: v.id,
          sha256: v.archiveSha256!,
          size_bytes: local.size,
          format: local.format,
          created_at: b.w.now,
        })
        changed = true
      }
      if (changed || archive.visible) {
        b.w.version(v.id, v.node_id)
        touched.add(v.node_id)
        b.result.changed.versions++
      }
    }
  }
  // Versions first: host node and archive rows reference them.
  for (const part of batches(inserts)) await db.insertInto('node_versions').values(part).execute()
  for (const row of updates) await db.updateTable('node_versions').set(row).where('id', '=', row.id).execute()
  if (replacedHostNodes.length) await db.deleteFrom('host_nodes').where('version_id', 'in', replacedHostNodes).execute()
  for (const part of batches(hostNodeRows)) await db.insertInto('host_nodes').values(part).execute()
  await putMirrorArchives(db, archiveRows)
  for (const part of batches(localArchiveRows)) await db.insertInto('archives').values(part).execute()
  await removeUnlisted(b, complete, items, siblings, touched)
  await refreshLatest(b, [...touched], nodes)
}

/** For nodes whose whole version list was read: mirrored versions it no longer has are gone upstream. */
async function removeUnlisted(
  b: Batch,
  complete: ReadonlySet<string>,
  items: VersionItem[],
  siblings: { id: string; node_id: string; status: string }[],
  touched: Set<string>,
) {
  const listed = new Set(items.map((v) => v.id))
  const gone = siblings.filter((s) => complete.has(s.node_id) && !listed.has(s.id) && s.status !== 'deleted')
  if (!gone.length) return
  const mirrored = new Set(
    (
      await listOrigins(
        b.w.db,
        'version',
        gone.map((s) => s.id),
      )
    ).map((o) => o.entity_id),
  )
  for (const s of gone.filter((g) => mirrored.has(g.id))) {
    await b.w.db.updateTable('node_versions').set({ status: 'deleted', updated_at: b.w.now }).where('id', '=', s.id).execute()
    recordOrigin(b, 'version', s.id, { status: 'deleted' })
    b.w.version(s.id, s.node_id)
    touched.add(s.node_id)
    b.result.changed.removed++
  }
}

/** The latest version of each node whose versions changed, computed here by our rules (batched). */
async function refreshLatest(
  b: Batch,
  nodeIds: string[],
  nodes: Map<string, { latest_version_id: string | null; latest_version_status: string | null }>,
) {
  const byNode = new Map<string, { id: string; version: string; status: VersionItem['status'] }[]>()
  for (const s of await siblingsOf(b, nodeIds)) (byNode.get(s.node_id) ?? byNode.set(s.node_id, []).get(s.node_id)!).push(s)
  for (const id of nodeIds) {
    const latest = pickLatest(byNode.get(id) ?? [])
    const node = nodes.get(id)!
    if ((latest?.id ?? null) === node.latest_version_id && (latest?.status ?? null) === node.latest_version_status) continue
    await setLatestVersion(b.w.db, id, latest, b.w.now)
    b.w.node(id)
  }
}
