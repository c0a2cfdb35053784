/**
 * Following another registry-mirror's change feed from the stored serial: exact and incremental, tombstones
 * included. A new instance id (the upstream was reset) or a feed behind our cursor means a full pass: everything
 * from serial 0, then what it no longer has is removed. Each batch commits with its cursor, so a killed run
 * resumes where it stopped; the next page is fetched while the current one is applied.
 */
import type { EntityKind, MirrorItem, VersionItem } from '../../domain/mirror-items'
import type { Store } from '../../store/db'
import { listUnseen, touchOrigins } from '../../store/mirror-entities'
import { updateSource } from '../../store/mirror-sources'
import { fetchFeedPage, type FeedPageItems } from '../../upstream/feed-client'
import { timestamp, type Deps } from '../deps'
import { applyItems, type ApplyOptions } from './apply'
import { addProblems, type RunContext } from './sync'

export async function feedPass(ctx: RunContext): Promise<void> {
  const { deps, opts, source, summary } = ctx
  const fetchPage = (since: number) => fetchFeedPage(opts.http, opts.from, since, timestamp(deps))
  let page = await fetchPage(source.cursor_serial)
  const reset = source.upstream_instance !== '' && page.instance !== source.upstream_instance
  const behind = page.head < source.cursor_serial
  const due = source.runs_since_full + 1 >= opts.fullEvery
  const full = opts.full || reset || behind || due || source.upstream_instance === ''
  if (reset || behind) deps.log.warn('mirror.upstream_reset', { upstream: opts.from, instance: page.instance, head: page.head })
  if (full && source.cursor_serial !== 0) page = await fetchPage(0)
  summary.full = full
  await followPages(ctx, page, fetchPage, { full, startSerial: full ? 0 : source.cursor_serial })
}

/**
 * Applies feed pages in order, from `first` until the head (fetching the next page while applying one), each
 * batch committed with the source's cursor. A full pass then removes what it did not see. Also used by import,
 * whose pages are the bundle's rows.
 */
export async function followPages(
  ctx: RunContext,
  first: FeedPageItems,
  nextPage: (since: number) => Promise<FeedPageItems>,
  opts: { full: boolean; startSerial: number; localArchives?: ApplyOptions['localArchives'] },
): Promise<void> {
  const { deps, source, summary } = ctx
  let page = first
  const full = opts.full
  const passMark = full ? newPassMark(deps) : undefined
  const startSerial = opts.startSerial
  ctx.progress({ phase: 'metadata', done: 0, total: Math.max(0, page.head - startSerial) })

  /** Versions waiting for their node, with their serials: the cursor never passes the oldest. */
  let held: { serial: number; item: VersionItem }[] = []
  /** Nodes the feed says are gone: their versions (listed before the tombstone) have nothing to attach to. */
  const gone = new Set<string>()
  const pages = prefetch(page, nextPage)
  for (;;) {
    ctx.checkpoint()
    // As many pages as have arrived (at least one), up to a batch: the next ones download while this one applies.
    const batch = await pages.take(APPLY_BATCH)
    if (!batch.length) break
    page = batch[batch.length - 1]!
    const serialOf = new Map<VersionItem, number>(held.map((h) => [h.item, h.serial]))
    const items: MirrorItem[] = held.map((h) => ({ kind: 'version', data: h.item }))
    for (const p of batch) {
      addProblems(ctx, p.problems)
      for (const { item } of p.items) if ('tombstone' in item && item.kind === 'node') gone.add(item.id)
      for (const { serial, item } of p.items) {
        if (item.kind === 'version' && !('tombstone' in item) && gone.has(item.data.node_id)) continue
        items.push(item)
        if (item.kind === 'version' && !('tombstone' in item)) serialOf.set(item.data, serial)
      }
    }
    const problemIds = batch.flatMap((p) => p.problems)
    const pageEnd = page.next
    const instance = page.instance
    const result = await applyItems(deps, items, {
      sourceId: source.id,
      passMark,
      skipped: ctx.skipped,
      localArchives: opts.localArchives,
      finish: async (db: Store, r) => {
        const oldest = r.held.reduce((min, v) => Math.min(min, serialOf.get(v) ?? min), Number.POSITIVE_INFINITY)
        const cursor = Number.isFinite(oldest) ? Math.min(pageEnd, oldest - 1) : pageEnd
        await updateSource(db, source.id, { cursor_serial: Math.max(cursor, 0), upstream_instance: instance })
        // Entities with problems are not gone: a full pass keeps them rather than removing them.
        if (passMark)
          for (const p of problemIds) if (p.kind !== 'archive' && p.kind !== 'page') await touchOrigins(db, p.kind, [p.id], passMark)
      },
    })
    held = result.held.filter((item) => !gone.has(item.node_id)).map((item) => ({ item, serial: serialOf.get(item) ?? pageEnd }))
    addProblems(ctx, result.problems)
    for (const k of ['publishers', 'nodes', 'versions', 'removed'] as const) summary.changed[k] += result.changed[k]
    ctx.progress({ done: Math.max(0, pageEnd - startSerial) })
  }
  // Versions whose node never came: it was removed upstream, or skipped.
  addProblems(
    ctx,
    held.map((h) => ({ kind: 'version' as const, id: h.item.id, reason: `its node "${h.item.node_id}" is not in the upstream's feed` })),
  )
  if (held.length) await updateSource(deps.db, source.id, { cursor_serial: page.next })
  if (passMark) await removeUnseen(ctx, passMark)
  await updateSource(deps.db, source.id, { runs_since_full: full ? 0 : source.runs_since_full + 1 })
}

/** Items applied in one transaction at most (several feed pages, when they have arrived). */
const APPLY_BATCH = 5000
/** Pages fetched ahead of the one being applied, at most. */
const AHEAD = 8

/** Fetches pages one after another ahead of their use, keeping at most AHEAD of them. */
function prefetch(first: FeedPageItems, nextPage: (since: number) => Promise<FeedPageItems>) {
  const ready: FeedPageItems[] = [first]
  let failure: unknown
  let done = !(first.next < first.head && first.items.length + first.problems.length > 0)
  let wake: (() => void) | undefined
  let room: (() => void) | undefined
  void (async () => {
    let last = first
    while (!done) {
      if (ready.length >= AHEAD) await new Promise<void>((r) => (room = r))
      try {
        last = await nextPage(last.next)
      } catch (err) {
        failure = err
        done = true
        break
      }
      ready.push(last)
      done = !(last.next < last.head && last.items.length + last.problems.length > 0)
      wake?.()
    }
    wake?.()
  })()
  return {
    /** The pages that have arrived (waiting for one if none has), up to about `items` items; [] at the end. */
    async take(items: number): Promise<FeedPageItems[]> {
      // Wait for a full batch while more is coming: fewer, larger transactions write each page of the store once.
      while (!done && ready.reduce((n, p) => n + p.items.length, 0) < items && ready.length < AHEAD)
        await new Promise<void>((r) => (wake = r))
      if (!ready.length && failure) throw failure
      const out: FeedPageItems[] = []
      let count = 0
      while (ready.length && (out.length === 0 || count + ready[0]!.items.length <= items)) {
        const p = ready.shift()!
        count += p.items.length
        out.push(p)
      }
      room?.()
      return out
    },
  }
}

/** A full pass's own mark: its start time, made unique (two passes may start within one millisecond). */
export const newPassMark = (deps: Deps) => `${timestamp(deps)} ${crypto.randomUUID()}`

/** After a full pass: what this source mirrored here and the pass did not see is gone upstream. */
export async function removeUnseen(
  ctx: RunContext,
  passMark: string,
  kinds: readonly EntityKind[] = ['version', 'node', 'publisher'],
): Promise<void> {
  const tombstones: MirrorItem[] = []
  for (const kind of kinds) {
    for (const id of await listUnseen(ctx.deps.db, ctx.source.id, kind, passMark)) tombstones.push({ kind, tombstone: true, id })
  }
  if (!tombstones.length) return
  const result = await applyItems(ctx.deps, tombstones, { sourceId: ctx.source.id, skipped: ctx.skipped })
  ctx.summary.changed.removed += result.changed.removed
}
