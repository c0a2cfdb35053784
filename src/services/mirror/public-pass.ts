/**
 * Mirroring the public registry, which has no feed: page through `GET /nodes` (since the last run, less an
 * overlap window, with `timestamp=`), read the versions of nodes that are new or whose latest version changed,
 * and the host node names of their latest active version. A full pass (every N runs, or --full) reads every
 * node's versions and records what disappeared, after asking for each such node once more; a killed full pass
 * resumes without reading again the nodes it already did.
 */
import type { MirrorItem, VersionItem } from '../../domain/mirror-items'
import { findOrigin, listNodesChecked, listUnseen, touchOrigins } from '../../store/mirror-entities'
import { updateSource } from '../../store/mirror-sources'
import { fetchHostNodeNames, fetchNodePage, fetchVersions, nodeState, type PublicNode } from '../../upstream/public-registry'
import { timestamp } from '../deps'
import { pickLatest } from '../latest'
import { applyItems } from './apply'
import { newPassMark, removeUnseen } from './feed-pass'
import { addProblems, type RunContext } from './sync'

/** Incremental runs read again what changed this long before the last run started (clock skew, slow commits). */
export const OVERLAP_MS = 60 * 60_000

interface Plan {
  entry: PublicNode
  versions?: VersionItem[]
}

/** Which nodes of a page need their versions read, and which latest versions their host node names. */
async function readVersions(ctx: RunContext, nodes: PublicNode[], passMark: string | undefined): Promise<Plan[]> {
  const { deps, opts } = ctx
  const db = deps.db
  const ids = nodes.map((n) => n.node.id)
  const checked = await listNodesChecked(db, ids)
  const latestIds = nodes.flatMap((n) => (n.latest ? [n.latest.id] : []))
  const known = new Map(
    latestIds.length
      ? (await db.selectFrom('node_versions').select(['id', 'status']).where('id', 'in', latestIds).execute()).map((r) => [r.id, r.status])
      : [],
  )
  return Promise.all(
    nodes.map(async (entry): Promise<Plan> => {
      const seenInPass = passMark !== undefined && checked.get(entry.node.id) === passMark
      const latestKnown = entry.latest
        ? known.has(entry.latest.id) && entry.latest.status.toLowerCase().endsWith(known.get(entry.latest.id)!)
        : true
      const needed = passMark !== undefined ? !seenInPass : !checked.has(entry.node.id) || !latestKnown
      if (!needed) return { entry }
      ctx.checkpoint()
      const read = await fetchVersions(opts.http, opts.from, entry.node.id, timestamp(deps))
      if (!read) return { entry }
      addProblems(ctx, read.problems)
      const latest = pickLatest(read.versions.filter((v) => v.status === 'active'))
      if (latest) {
        const origin = await findOrigin(db, 'version', latest.id)
        if (!origin?.mirror_host_nodes_at) latest.hostNodes = await fetchHostNodeNames(opts.http, opts.from, entry.node.id, latest.version)
      }
      return { entry, versions: read.versions }
    }),
  )
}

export async function publicPass(ctx: RunContext): Promise<void> {
  const { deps, opts, source, summary } = ctx
  const due = source.runs_since_full + 1 >= opts.fullEvery
  const full = opts.full || due || !source.cursor_time || source.full_pass_started_at !== null
  summary.full = full
  const runStarted = timestamp(deps)
  // A killed full pass left its mark on the source: the next run resumes it.
  const passMark = full ? (source.full_pass_started_at ?? newPassMark(deps)) : undefined
  if (full) await updateSource(deps.db, source.id, { full_pass_started_at: passMark })
  const since = full ? undefined : new Date(Date.parse(source.cursor_time) - OVERLAP_MS).toISOString()
  let done = 0
  for (let page = 1, pages = 1; page <= pages; page++) {
    ctx.checkpoint()
    const read = await fetchNodePage(opts.http, opts.from, { page, since, now: timestamp(deps) })
    pages = read.totalPages
    ctx.progress({ phase: 'metadata', total: read.total })
    addProblems(ctx, read.problems)
    const plans = await readVersions(ctx, read.nodes, passMark)
    const items: MirrorItem[] = []
    for (const p of plans) {
      items.push({ kind: 'node', data: p.entry.node, publisher: p.entry.publisher })
      for (const v of p.versions ?? []) items.push({ kind: 'version', data: v })
    }
    const complete = new Set(plans.filter((p) => p.versions).map((p) => p.entry.node.id))
    const result = await applyItems(deps, items, {
      sourceId: source.id,
      passMark,
      completeVersionLists: complete,
      skipped: ctx.skipped,
      finish: async (db) => {
        // Nodes skipped for a problem are not gone: a full pass keeps them.
        if (passMark)
          await touchOrigins(
            db,
            'node',
            read.problems.map((p) => p.id),
            passMark,
          )
      },
    })
    addProblems(ctx, result.problems)
    for (const k of ['publishers', 'nodes', 'versions', 'removed'] as const) summary.changed[k] += result.changed[k]
    done += read.nodes.length + read.problems.length
    ctx.progress({ done })
    if (!read.nodes.length && !read.problems.length) break
  }
  if (passMark) await confirmAndRemove(ctx, passMark)
  await updateSource(deps.db, source.id, {
    cursor_time: runStarted,
    full_pass_started_at: null,
    runs_since_full: full ? 0 : source.runs_since_full + 1,
  })
}

/** Nodes a full pass did not list: asked for once more (paging a live list can miss one), then removed if gone. */
async function confirmAndRemove(ctx: RunContext, passMark: string): Promise<void> {
  const unseen = await listUnseen(ctx.deps.db, ctx.source.id, 'node', passMark)
  const stillThere: string[] = []
  for (const id of unseen) {
    ctx.checkpoint()
    if ((await nodeState(ctx.opts.http, ctx.opts.from, id)) !== 'gone') stillThere.push(id)
  }
  await touchOrigins(ctx.deps.db, 'node', stillThere, passMark)
  // Only nodes: versions gone upstream were settled per node while its list was read, and a removed node hides its own.
  await removeUnseen(ctx, passMark, ['node'])
}
