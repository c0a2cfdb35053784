/** The versions of a mirrored batch: rows, host node names, where their archives are upstream (and pins), gone versions, latest. */
import type { VersionItem } from '../../domain/mirror-items'
import { breathe, insertRows, selectIn, updateRows } from '../../store/bulk'
import { isUniqueViolation } from '../../store/db'
import { listMirrorArchives, putMirrorArchives } from '../../store/mirror-entities'
import type { ArchiveRow as StoredArchiveRow, VersionRow } from '../../store/schema'
import { pickLatest } from '../latest'
import { type Batch, keepOrigin, keptStatus, mirrorColumns, originOf } from './apply'
import { batches, differs, versionRow } from './rows'

const sameNames = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i])

type Sibling = { id: string; node_id: string; version: string; status: VersionItem['status']; mirror_source_id: string | null }

const siblingsOf = (b: Batch, nodeIds: string[]) =>
  selectIn<Sibling>(b.w.db, 'select id, node_id, version, status, mirror_source_id from node_versions', 'node_id', nodeIds)

async function currentHostNodes(b: Batch, versionIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  for (const r of await selectIn<{ version_id: string; name: string }>(
    b.w.db,
    'select version_id, name from host_nodes',
    'version_id',
    versionIds,
  )) {
    ;(out.get(r.version_id) ?? out.set(r.version_id, []).get(r.version_id)!).push(r.name)
  }
  return out
}

/** The nodes of a batch's versions, with their latest version (and whether they are mirrored). */
type VersionNode = {
  id: string
  latest_version_id: string | null
  latest_version_status: string | null
  latest_version: string | null
  mirror_source_id: string | null
}
const NODES_OF_VERSIONS = `select nodes.id, nodes.latest_version_id, nodes.latest_version_status, nodes.mirror_source_id,
  latest.version as latest_version from nodes left join node_versions latest on latest.id = nodes.latest_version_id`

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

interface Planned {
  v: VersionItem
  row: ReturnType<typeof versionRow> & Partial<ReturnType<typeof mirrorColumns>> & { mirror_host_nodes_at?: string | null }
  insert: boolean
  update: boolean
  hostNodes: boolean
  archive?: ArchiveRow
  local?: { sha256: string; size: number; format: 'zip' | 'tar.gz' }
  visible: boolean
}

/** New version rows, in one statement; if one clashes with a version here (same node and version, another id), row by row. */
async function insertVersions(b: Batch, plans: Planned[]): Promise<Set<Planned>> {
  const failed = new Set<Planned>()
  const rows = plans.filter((p) => p.insert)
  for (const part of batches(rows.map((p) => p.row))) {
    try {
      await insertRows(b.w.db, 'node_versions', part)
    } catch (err) {
      if (!isUniqueViolation(err)) throw err
      // A failed statement leaves the transaction as it was: find the clashing rows one by one.
      for (const row of part) {
        try {
          await b.w.db.insertInto('node_versions').values(row).execute()
        } catch (e) {
          if (!isUniqueViolation(e)) throw e
          const plan = rows.find((p) => p.row === row)!
          failed.add(plan)
          b.result.problems.push({
            kind: 'version',
            id: row.id,
            reason: `version ${row.version} of "${row.node_id}" exists here with another id`,
          })
        }
      }
    }
  }
  return failed
}

export async function applyVersions(b: Batch, all: VersionItem[]): Promise<void> {
  // One item per id: the same id again for its node is the later entry; for another node, a clash the first one wins.
  const byId = new Map<string, VersionItem>()
  for (const v of all) {
    const first = byId.get(v.id)
    if (!first || first.node_id === v.node_id) byId.set(v.id, v)
    else
      b.result.problems.push({
        kind: 'version',
        id: v.id,
        reason: `it belongs to node "${first.node_id}", not "${v.node_id}" (listed under both)`,
      })
  }
  const items = [...byId.values()]
  const complete = b.opts.completeVersionLists ?? new Set<string>()
  const nodeIds = [...new Set([...items.map((v) => v.node_id), ...complete])]
  if (!nodeIds.length) return
  const db = b.w.db
  // Their nodes, mirrored before or in this batch (whose rows are written by now).
  const nodes = new Map((await selectIn<VersionNode>(db, NODES_OF_VERSIONS, 'nodes.id', nodeIds)).map((n) => [n.id, n]))
  const current = new Map(
    (
      await selectIn<VersionRow>(
        db,
        'select * from node_versions',
        'id',
        items.map((v) => v.id),
      )
    ).map((r) => [r.id, r]),
  )
  // Host node names, upstream archives and stored archives belong to versions stored here: only those are read.
  const stored = items.filter((v) => current.has(v.id))
  const [hostNodes, archives, kept] = await Promise.all([
    currentHostNodes(
      b,
      stored.filter((v) => v.hostNodes).map((v) => v.id),
    ),
    listMirrorArchives(
      db,
      stored.filter((v) => v.archiveUrl).map((v) => v.id),
    ),
    b.opts.localArchives
      ? selectIn<StoredArchiveRow>(
          db,
          'select * from archives',
          'version_id',
          stored.map((v) => v.id),
        )
      : [],
  ])
  const archiveOf = new Map(archives.map((r) => [r.version_id, r]))
  const pinnedHere = new Map(kept.map((r) => [r.version_id, r.sha256]))
  const plans: Planned[] = []
  for (const v of items) {
    await breathe()
    const problem = (reason: string) => b.result.problems.push({ kind: 'version', id: v.id, reason })
    if (b.opts.skipped.nodes.has(v.node_id)) {
      problem(`its node "${v.node_id}" was skipped`)
      continue
    }
    const node = nodes.get(v.node_id)
    if (!node) {
      b.result.held.push(v)
      continue
    }
    const cur = current.get(v.id)
    const origin = originOf(cur)
    if (node.mirror_source_id === null) problem(`its node "${v.node_id}" is a local node here`)
    else if (cur && !origin) problem('a local version has this id')
    else if (cur && cur.node_id !== v.node_id) problem(`it belongs to node "${cur.node_id}" here, not "${v.node_id}"`)
    else {
      const row = versionRow(v, keptStatus(cur, origin, v.status), b.w.now, cur)
      const changed = !cur || differs(cur, row)
      // When the names became known (the public pass asks for those it lacks); kept after.
      const namesKnown = v.hostNodes !== undefined ? b.w.now : null
      const mirror = {
        ...mirrorColumns(b, v.status),
        ...(!cur ? { mirror_host_nodes_at: namesKnown } : namesKnown && !cur.mirror_host_nodes_at && { mirror_host_nodes_at: namesKnown }),
      }
      const plan: Planned = { v, row, insert: !cur, update: !!cur && changed, hostNodes: false, visible: changed }
      if (changed) plan.row = { ...row, ...mirror }
      else await keepOrigin(b, 'version', v.id, cur!, mirror)
      if (v.hostNodes && !sameNames(hostNodes.get(v.id) ?? [], v.hostNodes)) plan.hostNodes = plan.visible = true
      const archive = archiveChange(b, v, archiveOf.get(v.id))
      plan.archive = archive.row
      plan.visible ||= archive.visible
      // Bytes carried here (an import): they become the version's archive, unless another one is pinned.
      const local = v.archiveSha256 ? b.opts.localArchives?.get(v.archiveSha256) : undefined
      const pinned = pinnedHere.get(v.id)
      const refused = v.archiveSha256 ? b.opts.refusedArchives?.get(v.archiveSha256) : undefined
      // As a sync refuses an archive that fails the check: the version has no archive here, and it is reported.
      if (refused && !pinned)
        b.result.problems.push({ kind: 'archive', id: `${v.node_id}@${v.version}`, reason: `invalid archive: ${refused}` })
      if (local && pinned && pinned !== v.archiveSha256) {
        problem(`the archive carried here (SHA-256 ${v.archiveSha256}) is not the one pinned here (${pinned}): refused`)
      } else if (local && !pinned) {
        plan.local = { sha256: v.archiveSha256!, ...local }
        plan.visible = true
      }
      plans.push(plan)
    }
  }
  // Versions first: host node and archive rows reference them.
  const failed = await insertVersions(b, plans)
  const applied = plans.filter((p) => !failed.has(p))
  for (const p of applied) if (p.update) await db.updateTable('node_versions').set(p.row).where('id', '=', p.row.id).execute()
  const replaced = applied.filter((p) => p.hostNodes && !p.insert).map((p) => p.v.id)
  if (replaced.length) await db.deleteFrom('host_nodes').where('version_id', 'in', replaced).execute()
  const names = applied.flatMap((p) => (p.hostNodes ? [...new Set(p.v.hostNodes)].map((name) => ({ version_id: p.v.id, name })) : []))
  await insertRows(db, 'host_nodes', names)
  await putMirrorArchives(
    db,
    applied.flatMap((p) => (p.archive ? [p.archive] : [])),
  )
  await insertRows(
    db,
    'archives',
    applied.flatMap((p) =>
      p.local
        ? [{ version_id: p.v.id, sha256: p.local.sha256, size_bytes: p.local.size, format: p.local.format, created_at: b.w.now }]
        : [],
    ),
  )
  const touched = new Map<string, { id: string; version: string; status: VersionItem['status'] }[]>()
  for (const p of applied) {
    await breathe()
    if (!p.visible) continue
    // The node's rendering changes only through its latest version (refreshLatest reports a new latest).
    b.w.version(p.v.id, p.v.node_id, { nodeUnchanged: p.v.id !== nodes.get(p.v.node_id)?.latest_version_id })
    b.result.changed.versions++
    ;(touched.get(p.v.node_id) ?? touched.set(p.v.node_id, []).get(p.v.node_id)!).push({
      id: p.v.id,
      version: p.row.version,
      status: p.row.status,
    })
  }
  const removed = await removeUnlisted(b, complete, items)
  await refreshLatest(b, touched, removed, nodes)
}

/** For nodes whose whole version list was read: mirrored versions it no longer has are gone upstream. Returns their nodes. */
async function removeUnlisted(b: Batch, complete: ReadonlySet<string>, items: VersionItem[]): Promise<Set<string>> {
  const nodes = new Set<string>()
  if (!complete.size) return nodes
  const listed = new Set(items.map((v) => v.id))
  const gone = (await siblingsOf(b, [...complete])).filter(
    (s) => !listed.has(s.id) && s.status !== 'deleted' && s.mirror_source_id !== null,
  )
  for (const s of gone) {
    await b.w.db
      .updateTable('node_versions')
      .set({ status: 'deleted', updated_at: b.w.now, ...mirrorColumns(b, 'deleted') })
      .where('id', '=', s.id)
      .execute()
    b.w.version(s.id, s.node_id)
    nodes.add(s.node_id)
    b.result.changed.removed++
  }
  return nodes
}

type LatestOf = { latest_version_id: string | null; latest_version_status: string | null; latest_version: string | null }

/**
 * The latest version of each node whose versions changed, by our rules. Adding versions can only move the latest
 * among the old latest and the changed ones, so only nodes whose latest itself changed (or lost versions) are read
 * whole; the new values are written in a few statements per batch.
 */
async function refreshLatest(
  b: Batch,
  changed: Map<string, { id: string; version: string; status: VersionItem['status'] }[]>,
  removed: Set<string>,
  nodes: Map<string, LatestOf>,
) {
  const recompute = [
    ...removed,
    ...[...changed].filter(([id, vs]) => vs.some((v) => v.id === nodes.get(id)?.latest_version_id)).map(([id]) => id),
  ]
  const whole = new Map<string, { id: string; version: string; status: VersionItem['status'] }[]>()
  for (const s of await siblingsOf(b, [...new Set(recompute)])) (whole.get(s.node_id) ?? whole.set(s.node_id, []).get(s.node_id)!).push(s)
  const updates: { id: string; latest: { id: string; status: VersionItem['status'] } | undefined }[] = []
  for (const id of new Set([...changed.keys(), ...removed])) {
    await breathe()
    const node = nodes.get(id)!
    const old = node.latest_version_id
      ? [{ id: node.latest_version_id, version: node.latest_version ?? '', status: node.latest_version_status as VersionItem['status'] }]
      : []
    const latest = pickLatest(whole.get(id) ?? [...old, ...(changed.get(id) ?? [])])
    if ((latest?.id ?? null) === node.latest_version_id && (latest?.status ?? null) === node.latest_version_status) continue
    updates.push({ id, latest })
    b.w.node(id)
  }
  await updateRows(
    b.w.db,
    'nodes',
    'id',
    updates.map((u) => ({
      id: u.id,
      latest_version_id: u.latest?.id ?? null,
      latest_version_status: u.latest?.status ?? null,
      updated_at: b.w.now,
    })),
  )
}
