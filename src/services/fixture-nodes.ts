/** The nodes and versions of a fixture, with their archives and host nodes; each node's latest_version follows as after publishing. */
import type { Insertable } from 'kysely'
import type { FixtureNode, FixtureVersion } from '../domain/fixture'
import { stableUuid } from '../domain/ids'
import { normalizeSemver } from '../domain/semver'
import {
  deleteHostNodes,
  hostNodesOfVersions,
  insertRows,
  nodesByNormalizedIds,
  publishersByIds,
  updateById,
  versionIdsTaken,
  versionsOfNodes,
} from '../store/batch'
import { insertNodeCounts, setNodeCounts, type NodeCounts } from '../store/node-downloads'
import { nodeFieldsToColumns } from '../store/nodes'
import type { ArchiveTable, HostNodeTable, NodeTable, NodeVersionTable } from '../store/schema'
import { given, instant, upsert, type FixtureStep } from './fixture-apply'
import type { FixtureArchive, FixtureArchives } from './fixture-archives'
import { pickLatest } from './latest'

const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value))

/** A node's columns without its download count, which lives in its narrow row (schema 17). */
const withoutCount = <T extends { downloads?: unknown }>({ downloads: _, ...columns }: T) => columns

/** What the store holds for the fixture's nodes, read in a few queries. */
async function readExisting(step: FixtureStep, nodes: readonly FixtureNode[], fixturePublishers: ReadonlySet<string>) {
  const db = step.w.db
  const normalizedIds = nodes.map((n) => n.id.toLowerCase())
  const byNormalizedId = new Map((await nodesByNormalizedIds(db, normalizedIds)).map((n) => [n.normalized_id, n]))
  const storedNodeIds = [...byNormalizedId.values()].map((n) => n.id)
  const versions = Map.groupBy(await versionsOfNodes(db, storedNodeIds), (v) => v.node_id)
  const named = [...new Set(nodes.map((n) => n.publisher).filter((p) => !fixturePublishers.has(p)))]
  const publishers = new Set([...fixturePublishers, ...(await publishersByIds(db, named)).map((p) => p.id)])
  const explicitIds = nodes.flatMap((n) => (n.versions ?? []).flatMap((v) => (v.id ? [v.id] : [])))
  const takenIds = new Map((await versionIdsTaken(db, explicitIds)).map((r) => [r.id, r]))
  const withHostNodes = nodes.flatMap((n) => (n.versions ?? []).filter((v) => v.host_nodes).map((v) => ({ n, v })))
  const versionIdsWithHostNodes = withHostNodes.flatMap(({ n, v }) => {
    const node = byNormalizedId.get(n.id.toLowerCase())
    const row = node && versions.get(node.id)?.find((r) => r.version === normalizeSemver(v.version))
    return row ? [row.id] : []
  })
  const byVersion = Map.groupBy(await hostNodesOfVersions(db, versionIdsWithHostNodes), (h) => h.version_id)
  const hostNodes = new Map([...byVersion].map(([id, rows]) => [id, rows.map((h) => h.name)]))
  return { byNormalizedId, versions, publishers, takenIds, hostNodes }
}

type Existing = Awaited<ReturnType<typeof readExisting>>

/** Rows to insert, in the order their references need. */
interface Pending {
  nodes: Insertable<NodeTable>[]
  counts: NodeCounts[]
  versions: Insertable<NodeVersionTable>[]
  archives: Insertable<ArchiveTable>[]
  hostNodes: Insertable<HostNodeTable>[]
  /** Versions whose host nodes are replaced by the file's list. */
  replaceHostNodes: string[]
  /** Updates of existing nodes, run after the versions their latest_version points at exist. */
  nodeUpdates: (() => Promise<void>)[]
}

function versionColumns(ver: FixtureVersion, archive: FixtureArchive | undefined) {
  const inspected = archive?.inspection
  return given({
    changelog: ver.changelog,
    dependencies_json: json(ver.dependencies),
    deprecated: ver.deprecated === undefined ? undefined : ver.deprecated ? 1 : 0,
    status: ver.status,
    status_reason: ver.status_reason ?? (inspected && !inspected.ok ? `invalid archive: ${inspected.reason}` : undefined),
    host_node_extract_status: inspected
      ? inspected.ok
        ? ('success' as const)
        : ('failed' as const)
      : ver.host_nodes
        ? ('success' as const)
        : undefined,
    supported_os_json: json(ver.supported_os),
    supported_accelerators_json: json(ver.supported_accelerators),
    supported_hostui_version: ver.supported_hostui_version,
    supported_hostui_frontend_version: ver.supported_hostui_frontend_version,
    tags_json: json(ver.tags),
    created_at: instant(ver.created_at),
  })
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a)
  const sb = new Set(b)
  return sa.size === sb.size && [...sb].every((x) => sa.has(x))
}

/** One node's versions; returns them all (stored and loaded) as they will be, for its latest_version. */
async function applyVersions(step: FixtureStep, n: FixtureNode, i: number, ex: Existing, archives: FixtureArchives, pending: Pending) {
  const { w, at, problems } = step
  const nodeId = n.id
  const stored = ex.versions.get(ex.byNormalizedId.get(n.id.toLowerCase())?.id ?? '') ?? []
  const after = new Map(stored.map((v) => [v.version, { id: v.id, version: v.version, status: v.status }]))
  for (const [j, ver] of (n.versions ?? []).entries()) {
    const path = `nodes[${i}].versions[${j}]`
    const version = normalizeSemver(ver.version)!
    const old = stored.find((v) => v.version === version)
    const taken = ver.id && !old ? ex.takenIds.get(ver.id) : undefined
    if (ver.id && old && old.id !== ver.id) {
      problems.push({ path: `${path}.id`, message: `version ${version} already exists with id "${old.id}"` })
      continue
    }
    if (taken) {
      problems.push({ path: `${path}.id`, message: `already the id of version ${taken.version} of node "${taken.node_id}"` })
      continue
    }
    const id = old?.id ?? ver.id ?? stableUuid(`version:${nodeId.toLowerCase()}@${version}`)
    const archive = archives.of(i, j)
    const wanted = versionColumns(ver, archive)
    const created = wanted.created_at ?? at
    let wrote = await upsert(step, old, wanted, {
      insert: () =>
        pending.versions.push({
          id,
          node_id: nodeId,
          version,
          changelog: '',
          dependencies_json: '[]',
          deprecated: 0,
          status: 'active',
          status_reason: '',
          host_node_extract_status: 'pending',
          supported_os_json: '[]',
          supported_accelerators_json: '[]',
          supported_hostui_version: '',
          supported_hostui_frontend_version: '',
          tags_json: '[]',
          tags_admin_json: '[]',
          ...wanted,
          created_at: created,
          updated_at: created,
        }),
      update: (changes) => updateById(w.db, 'node_versions', id, changes),
    })
    if (archive) {
      const { sha256, size, inspection } = archive
      pending.archives.push({ version_id: id, sha256, size_bytes: size, format: inspection.format ?? 'zip', created_at: at })
      if (inspection.ok) pending.hostNodes.push(...inspection.hostNodes.map((name) => ({ version_id: id, name })))
      wrote = true
    }
    if (ver.host_nodes && !(old && sameSet(ex.hostNodes.get(old.id) ?? [], ver.host_nodes))) {
      if (old) pending.replaceHostNodes.push(id)
      pending.hostNodes.push(...[...new Set(ver.host_nodes)].map((name) => ({ version_id: id, name })))
      wrote = true
    }
    if (wrote) w.version(id, nodeId)
    after.set(version, { id, version, status: wanted.status ?? old?.status ?? 'active' })
  }
  return [...after.values()]
}

export async function applyNodes(
  step: FixtureStep,
  nodes: readonly FixtureNode[],
  archives: FixtureArchives,
  fixturePublishers: ReadonlySet<string>,
): Promise<void> {
  const { w, at, problems } = step
  const ex = await readExisting(step, nodes, fixturePublishers)
  const pending: Pending = { nodes: [], counts: [], versions: [], archives: [], hostNodes: [], replaceHostNodes: [], nodeUpdates: [] }
  for (const [i, n] of nodes.entries()) {
    const existing = ex.byNormalizedId.get(n.id.toLowerCase())
    if (existing && existing.id !== n.id) {
      problems.push({
        path: `nodes[${i}].id`,
        message: `clashes with the existing node "${existing.id}" (node ids are unique ignoring case)`,
      })
      continue
    }
    if (!ex.publishers.has(n.publisher)) {
      problems.push({ path: `nodes[${i}].publisher`, message: `no publisher "${n.publisher}" in the fixture or the store` })
      continue
    }
    const { id: _id, publisher, versions: _v, repohost_stars, search_ranking, downloads, status, status_detail, created_at, ...fields } = n
    const latest = pickLatest(await applyVersions(step, n, i, ex, archives, pending))
    const columns = nodeFieldsToColumns(fields)
    if (columns.name === '') delete columns.name // a node always has a display name
    const wanted = {
      ...columns,
      ...given({
        publisher_id: publisher,
        repohost_stars,
        search_ranking,
        downloads,
        status,
        status_detail,
        created_at: instant(created_at),
      }),
      latest_version_id: latest?.id ?? null,
      latest_version_status: latest?.status ?? null,
    }
    const created = wanted.created_at ?? at
    const wrote = await upsert(step, existing, wanted, {
      insert: () => {
        pending.counts.push({ node_id: n.id, search_ranking: wanted.search_ranking, downloads: wanted.downloads })
        pending.nodes.push({
          ...withoutCount(wanted),
          id: n.id,
          normalized_id: n.id.toLowerCase(),
          publisher_id: publisher,
          name: columns.name ?? n.id,
          created_at: created,
          updated_at: created,
        })
      },
      update: async (changes) =>
        void pending.nodeUpdates.push(async () => {
          // The count lives in the node's narrow row (schema 17), with a copy of its ranking.
          await updateById(w.db, 'nodes', n.id, withoutCount(changes))
          await setNodeCounts(w.db, n.id, changes)
        }),
    })
    if (wrote) w.node(n.id)
  }
  await insertRows(w.db, 'nodes', pending.nodes)
  await insertNodeCounts(w.db, pending.counts)
  await insertRows(w.db, 'node_versions', pending.versions)
  for (const update of pending.nodeUpdates) await update()
  await insertRows(w.db, 'archives', pending.archives)
  for (const id of pending.replaceHostNodes) await deleteHostNodes(w.db, id)
  await insertRows(w.db, 'host_nodes', pending.hostNodes)
}
