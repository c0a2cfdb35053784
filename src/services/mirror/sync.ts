/**
 * One sync run from an upstream: another registry-mirror (through its change feed) or the public registry
 * (through its lists), then the archives. The run records its outcome on the source, reports progress, and
 * returns a summary; it stops between batches when its signal aborts. Everything it writes is resumable.
 */
import type { ItemProblem } from '../../domain/mirror-items'
import { plural } from '../../domain/plural'
import { withoutUrlSecrets } from '../../domain/urls'
import { ensureSource, updateSource } from '../../store/mirror-sources'
import type { ArchiveMode, MirrorSourceRow } from '../../store/schema'
import { FeedError, hasFeed } from '../../upstream/feed-client'
import { UpstreamError, type UpstreamHttp } from '../../upstream/http-client'
import { timestamp, type Deps } from '../deps'
import { setArchiveMode } from './archive-mode'
import { archivePass } from './archive-pass'
import { feedPass } from './feed-pass'
import { publicPass } from './public-pass'

export interface SyncOptions {
  /** The upstream's base URL, without a trailing slash. */
  from: string
  archives: ArchiveMode
  full: boolean
  /** Every this many runs, a full pass (deletions the lists do not show, drifted archives). */
  fullEvery: number
  http: UpstreamHttp
  signal?: AbortSignal
  onProgress?: (p: SyncProgress) => void
}

export interface SyncProgress {
  phase: 'metadata' | 'archives'
  done: number
  total?: number
  bytes: number
}

export interface SyncSummary {
  source: string
  kind: 'feed' | 'public' | 'bundle'
  full: boolean
  complete: boolean
  /** Why the run did not complete. */
  reason?: string
  /** Whether the upstream could not be reached at all (for freshness). */
  unreachable: boolean
  changed: { publishers: number; nodes: number; versions: number; removed: number }
  archives: { fetched: number; bytes: number; refused: number; failed: number }
  problems: ItemProblem[]
  seconds: number
}

/** What a pass shares with the run. */
export interface RunContext {
  deps: Deps
  opts: SyncOptions
  source: MirrorSourceRow
  summary: SyncSummary
  /** Ids skipped so far in the run. */
  skipped: { nodes: Set<string>; publishers: Set<string> }
  progress(p: Partial<SyncProgress>): void
  /** The first archive that could not be fetched, and why: said in the run's reason (the others are in the log). */
  firstArchiveFailure?: string
  /** Throws when the run was asked to stop. */
  checkpoint(): void
}

export const MAX_REPORTED_PROBLEMS = 100

export async function runSync(deps: Deps, opts: SyncOptions): Promise<SyncSummary> {
  const started = performance.now()
  const summary: SyncSummary = {
    source: withoutUrlSecrets(opts.from),
    kind: 'feed',
    full: opts.full,
    complete: false,
    unreachable: false,
    changed: { publishers: 0, nodes: 0, versions: 0, removed: 0 },
    archives: { fetched: 0, bytes: 0, refused: 0, failed: 0 },
    problems: [],
    seconds: 0,
  }
  let state: SyncProgress = { phase: 'metadata', done: 0, bytes: 0 }
  const ctx: RunContext = {
    deps,
    opts,
    source: undefined as unknown as MirrorSourceRow,
    summary,
    skipped: { nodes: new Set(), publishers: new Set() },
    progress(p) {
      state = { ...state, ...p }
      opts.onProgress?.(state)
    },
    checkpoint() {
      if (opts.signal?.aborted) throw new UpstreamError('aborted', 'the run was stopped')
    },
  }
  try {
    const existing = await deps.db.selectFrom('mirror_sources').selectAll().where('id', '=', opts.from).executeTakeFirst()
    const kind = existing && existing.kind !== 'bundle' ? existing.kind : (await hasFeed(opts.http, opts.from)) ? 'feed' : 'public'
    summary.kind = kind
    ctx.source = await ensureSource(deps.db, opts.from, kind, timestamp(deps))
    await updateSource(deps.db, opts.from, { last_attempt_at: timestamp(deps) })
    await setArchiveMode(deps, ctx.source, opts.archives)
    await (kind === 'feed' ? feedPass(ctx) : publicPass(ctx))
    if (opts.archives !== 'none') await archivePass(ctx, { fetchAll: opts.archives === 'eager', verify: summary.full })
    summary.complete = summary.archives.failed === 0
    if (!summary.complete) {
      summary.reason = `${plural(summary.archives.failed, 'archive')} could not be fetched (the first, ${ctx.firstArchiveFailure})`
    }
  } catch (err) {
    summary.complete = false
    summary.unreachable = err instanceof UpstreamError && err.kind === 'unreachable'
    const known = err instanceof UpstreamError || err instanceof SyncError || err instanceof FeedError
    summary.reason = known ? (err as Error).message : `unexpected failure: ${(err as Error).message}`
    if (!known) deps.log.error('mirror.sync_failed', { error: withoutUrlSecrets(summary.reason), stack: stackOf(err) })
  }
  // Said on stderr, in /ready and the log: an address in it (an archive's, an upstream's) without its secrets.
  if (summary.reason) summary.reason = withoutUrlSecrets(summary.reason)
  summary.seconds = (performance.now() - started) / 1000
  await recordOutcome(deps, opts.from, summary).catch((err: Error) => deps.log.error('mirror.record_failed', { error: err.message }))
  return summary
}

const stackOf = (err: unknown) => withoutUrlSecrets(String((err as Error).stack))

/** A run that cannot go on for a reason of its own (not the network's). */
export class SyncError extends Error {}

async function recordOutcome(deps: Deps, id: string, s: SyncSummary): Promise<void> {
  const exists = await deps.db.selectFrom('mirror_sources').select('id').where('id', '=', id).executeTakeFirst()
  if (!exists) return
  const outcome = {
    complete: s.complete,
    full: s.full,
    changed: s.changed,
    archives: s.archives,
    problems: s.problems.length,
    first_problems: s.problems.slice(0, 20),
    seconds: Math.round(s.seconds * 10) / 10,
  }
  await updateSource(deps.db, id, {
    last_error: s.complete ? '' : (s.reason ?? 'incomplete'),
    last_summary_json: JSON.stringify(outcome),
    ...(s.complete && { last_success_at: timestamp(deps) }),
  })
}

export function addProblems(ctx: RunContext, problems: readonly ItemProblem[]): void {
  for (const given of problems) {
    // A reason may quote what the upstream sent (a URL that did not validate, say).
    const p = { ...given, reason: withoutUrlSecrets(given.reason) }
    ctx.summary.problems.push(p)
    ctx.deps.log.warn('mirror.item_skipped', { kind: p.kind, id: p.id, reason: p.reason })
  }
}
