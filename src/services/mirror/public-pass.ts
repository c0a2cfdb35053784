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

/** Pages read in one pass at most (a hundred million nodes at the upstream's 1,000 a page): paging ends, whatever it says. */
export const MAX_PAGES = 100_000

/**
 * Version lists held at once: each reply may be as large as the client's cap (64 MB), so a page is read and
 * applied in groups of at most this many lists rather than all its (up to 1,000) nodes' lists together.
 */
export const VERSION_LISTS_AT_ONCE = 8

interface Plan {
  entry: PublicNode
  /** Whether its versions are to be read. */
  needed: boolean
}

/** A node of a group, with its versions when they were read (held only while the group is applied). */
interface Read {
  entry: PublicNode
  versions?: VersionItem[]
}

/** Which nodes of a page need their versions read (new, their latest version changed, or not yet seen by the full pass). */
async function planPage(ctx: RunContext, nodes: PublicNode[], passMark: string | undefined): Promise<Plan[]> {
  const db = ctx.deps.db
  const checked = await listNodesChecked(
    db,
    nodes.map((n) => n.node.id),
  )
  const latestIds = nodes.flatMap((n) => (n.latest ? [n.latest.id] : []))
  const known = new Map(
    latestIds.length
      ? (await db.selectFrom('node_versions').select(['id', 'status']).where('id', 'in', latestIds).execute()).map((r) => [r.id, r.status])
      : [],
  )
  return nodes.map((entry) => {
    const seenInPass = passMark !== undefined && checked.get(entry.node.id) === passMark
    const latestKnown = entry.latest
      ? known.has(entry.latest.id) && entry.latest.status.toLowerCase().endsWith(known.get(entry.latest.id)!)
      : true
    return { entry, needed: passMark !== undefined ? !seenInPass : !checked.has(entry.node.id) || !latestKnown }
  })
}

/** The plans in groups holding at most VERSION_LISTS_AT_ONCE lists to read (always one group, maybe empty). */
function inGroups(plans: Plan[]): Plan[][] {
  const groups: Plan[][] = [[]]
  let reads = 0
  for (const p of plans) {
    if (p.needed && reads === VERSION_LISTS_AT_ONCE) {
      groups.push([])
      reads = 0
    }
    groups[groups.length - 1]!.push(p)
    if (p.needed) reads++
  }
  return groups
}

/** A node's versions, and the host node names of its latest active version when not read before; undefined when it is gone. */
async function readVersions(ctx: RunContext, entry: PublicNode): Promise<VersionItem[] | undefined> {
  const { deps, opts } = ctx
  const id = entry.node.id
  const read = await fetchVersions(opts.http, opts.from, id)
  if (!read) return undefined
  addProblems(ctx, read.problems)
  const latest = pickLatest(read.versions.filter((v) => v.status === 'active'))
  if (latest) {
    const origin = await findOrigin(deps.db, 'version', latest.id)
    if (!origin?.mirror_host_nodes_at) latest.hostNodes = await fetchHostNodeNames(opts.http, opts.from, id, latest.version)
  }
  return read.versions
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
  // Ids listed so far in this pass: a page listing none but these is an upstream going round in circles.
  const listed = new Set<string>()
  for (let page = 1, pages = 1; page <= pages; page++) {
    ctx.checkpoint()
    if (page > MAX_PAGES) {
      addProblems(ctx, [{ kind: 'page', id: String(page), reason: `the upstream lists more than ${MAX_PAGES} pages: paging stopped` }])
      break
    }
    const read = await fetchNodePage(opts.http, opts.from, { page, since })
    pages = read.totalPages
    const ids = [...read.nodes.map((n) => n.node.id), ...read.problems.map((p) => p.id)]
    if (ids.length && ids.every((id) => listed.has(id))) {
      addProblems(ctx, [
        { kind: 'page', id: String(page), reason: 'the upstream lists only nodes it listed on earlier pages: paging stopped' },
      ])
      break
    }
    for (const id of ids) listed.add(id)
    ctx.progress({ phase: 'metadata', total: read.total })
    addProblems(ctx, read.problems)
    // Read and applied a group at a time, so that only a group's version lists are held (see VERSION_LISTS_AT_ONCE).
    for (const [i, group] of inGroups(await planPage(ctx, read.nodes, passMark)).entries()) {
      ctx.checkpoint()
      const reads = await Promise.all(
        group.map(async (p): Promise<Read> => ({ entry: p.entry, versions: p.needed ? await readVersions(ctx, p.entry) : undefined })),
      )
      // Nodes skipped for a problem are not gone: a full pass keeps them (marked once, with the page's first group).
      await applyGroup(ctx, reads, passMark, i === 0 ? read.problems.map((p) => p.id) : [])
    }
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

/** Applies a group's nodes and the versions read for them, in one transaction; `keep` are ids a full pass keeps. */
async function applyGroup(ctx: RunContext, plans: Read[], passMark: string | undefined, keep: string[]): Promise<void> {
  const items: MirrorItem[] = []
  for (const p of plans) {
    items.push({ kind: 'node', data: p.entry.node, publisher: p.entry.publisher })
    for (const v of p.versions ?? []) items.push({ kind: 'version', data: v })
  }
  const result = await applyItems(ctx.deps, items, {
    sourceId: ctx.source.id,
    passMark,
    completeVersionLists: new Set(plans.filter((p) => p.versions).map((p) => p.entry.node.id)),
    skipped: ctx.skipped,
    finish: async (db) => {
      if (passMark && keep.length) await touchOrigins(db, 'node', keep, passMark)
    },
  })
  addProblems(ctx, result.problems)
  for (const k of ['publishers', 'nodes', 'versions', 'removed'] as const) ctx.summary.changed[k] += result.changed[k]
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
