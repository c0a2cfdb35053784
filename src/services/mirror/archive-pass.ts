/**
 * The archive phase of a sync: every active mirrored version's archive not stored yet (with --archives), and on a
 * full pass a check of the stored ones against the upstream. Bounded by the client's concurrency; a failure is
 * counted and the run reported incomplete, so the next run tries again. What was refused (bytes other than the
 * pinned ones, an invalid archive) is left alone until a full pass, which tries it again: the upstream may have put
 * it right.
 */
import { UpstreamError } from '../../upstream/http-client'
import { fetchArchive, verifyArchive, type ArchiveOutcome } from './archives'
import { addProblems, type RunContext } from './sync'

const CHUNK = 64

export async function archivePass(ctx: RunContext, opts: { fetchAll: boolean; verify: boolean }): Promise<void> {
  const { deps, source, summary } = ctx
  const base = deps.db
    .selectFrom('mirror_archives')
    .innerJoin('node_versions', 'node_versions.id', 'mirror_archives.version_id')
    .innerJoin('nodes', 'nodes.id', 'node_versions.node_id')
    .leftJoin('archives', 'archives.version_id', 'mirror_archives.version_id')
    .select([
      'mirror_archives.version_id',
      'node_versions.node_id',
      'node_versions.version',
      'mirror_archives.url',
      'mirror_archives.sha256',
      'mirror_archives.etag',
      'mirror_archives.problem',
    ])
    .where('mirror_archives.source_id', '=', source.id)
    // What can be installed: an active version of an active node (a banned node's archives are refused upstream too).
    .where('node_versions.status', '=', 'active')
    .where('nodes.status', '=', 'active')
    .$if(!opts.verify, (q) => q.where('mirror_archives.problem', '=', ''))
  const missing = opts.fetchAll ? await base.where('archives.version_id', 'is', null).orderBy('mirror_archives.version_id').execute() : []
  const stored = opts.verify ? await base.where('archives.version_id', 'is not', null).orderBy('mirror_archives.version_id').execute() : []
  let done = 0
  let bytes = 0
  ctx.progress({ phase: 'archives', done: 0, total: missing.length + stored.length, bytes: 0 })
  const run = async (t: (typeof missing)[number], work: () => Promise<ArchiveOutcome>) => {
    try {
      const outcome = await work()
      if ('refused' in outcome) {
        summary.archives.refused++
        addProblems(ctx, [{ kind: 'archive', id: `${t.node_id}@${t.version}`, reason: outcome.refused }])
      } else if (outcome.stored) {
        summary.archives.fetched++
        summary.archives.bytes += outcome.bytes
        bytes += outcome.bytes
      }
    } catch (err) {
      if (!(err instanceof UpstreamError) || err.kind === 'aborted') throw err
      const id = `${t.node_id}@${t.version}`
      if (err.status === 404 || err.status === 410) {
        // Gone upstream: the run did what it could; reported (exit 3), and asked again next run. A refusal (401, 403)
        // stays a failure: an upstream refusing every archive must not pass for a complete, installable mirror.
        addProblems(ctx, [{ kind: 'archive', id, reason: `the upstream has no such archive (HTTP ${err.status})` }])
      } else {
        summary.archives.failed++
        ctx.firstArchiveFailure ??= `${id}: ${err.message}`
        deps.log.warn('mirror.archive_failed', { node: t.node_id, version: t.version, error: err.message })
      }
    }
    ctx.progress({ done: ++done, bytes })
  }
  // Versions announced with the same bytes fetch them once: the first transfers them, the others find them stored.
  const groups = new Map<string, typeof missing>()
  for (const t of missing)
    (groups.get(t.sha256 ?? t.version_id) ?? groups.set(t.sha256 ?? t.version_id, []).get(t.sha256 ?? t.version_id)!).push(t)
  const queue = [...groups.values()]
  for (let i = 0; i < queue.length; i += CHUNK) {
    ctx.checkpoint()
    await Promise.all(
      queue.slice(i, i + CHUNK).map(async (group) => {
        for (const t of group) await run(t, () => fetchArchive(deps, ctx.opts.http, t))
      }),
    )
  }
  for (let i = 0; i < stored.length; i += CHUNK) {
    ctx.checkpoint()
    await Promise.all(stored.slice(i, i + CHUNK).map((t) => run(t, () => verifyArchive(deps, ctx.opts.http, t))))
  }
}
