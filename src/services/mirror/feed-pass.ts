/**
 * Following another registry-mirror's change feed from the stored serial: exact and incremental, tombstones
 * included. A new instance id (the upstream was reset) or a feed behind our cursor means a full pass: everything
 * from serial 0, then what it no longer has is removed. Each batch commits with its cursor, so a killed run
 * resumes where it stopped; the next pages are read while the current ones are applied.
 */
import type { EntityKind, MirrorItem, VersionItem } from '../../domain/mirror-items'
import { withoutUrlSecrets } from '../../domain/urls'
import type { Store } from '../../store/db'
import { breathe } from '../../store/bulk'
import { listUnseen, touchOrigins } from '../../store/mirror-entities'
import { updateSource } from '../../store/mirror-sources'
import { fetchFeedPage } from '../../upstream/feed-client'
import { readFeed, type FeedReader } from '../../upstream/feed-reader'
import { timestamp, type Deps } from '../deps'
import { applyItems, type ApplyOptions } from './apply'
import { addProblems, type RunContext } from './sync'

export async function feedPass(ctx: RunContext): Promise<void> {
  const { deps, opts, source, summary } = ctx
  const fetchPage = (since: number) => fetchFeedPage(opts.http, opts.from, since)
  let page = await fetchPage(source.cursor_serial)
  const reset = source.upstream_instance !== '' && page.instance !== source.upstream_instance
  const behind = page.head < source.cursor_serial
  const due = source.runs_since_full + 1 >= opts.fullEvery
  const full = opts.full || reset || behind || due || source.upstream_instance === ''
  if (reset || behind) {
    const upstream = withoutUrlSecrets(opts.from)
    deps.log.warn('mirror.upstream_reset', { upstream, instance: page.instance, head: page.head })
  }
  if (full && source.cursor_serial !== 0) page = await fetchPage(0)
  summary.full = full
  const reader = readFeed(opts.http, opts.from, page, { ahead: AHEAD })
  try {
    await followPages(ctx, reader, { full, startSerial: full ? 0 : source.cursor_serial, head: page.head })
  } finally {
    reader.close()
  }
}

/**
 * Applies the reader's pages in order until the head (the next ones are read while these are applied), each
 * batch committed with the source's cursor. A full pass then removes what it did not see. Also used by import,
 * whose pages are the bundle's rows.
 */
export async function followPages(
  ctx: RunContext,
  pages: FeedReader,
  opts: {
    full: boolean
    startSerial: number
    head: number
    localArchives?: ApplyOptions['localArchives']
    localIntent?: ApplyOptions['localIntent']
    refusedArchives?: ApplyOptions['refusedArchives']
  },
): Promise<void> {
  const { deps, source, summary } = ctx
  const full = opts.full
  const passMark = full ? newPassMark(deps) : undefined
  const startSerial = opts.startSerial
  ctx.progress({ phase: 'metadata', done: 0, total: Math.max(0, opts.head - startSerial) })

  /** Versions waiting for their node, with their serials: the cursor never passes the oldest. */
  let held: { serial: number; item: VersionItem }[] = []
  /** Nodes the feed says are gone: their versions (listed before the tombstone) have nothing to attach to. */
  const gone = new Set<string>()
  let cursor = startSerial
  /** The upstream's newest serial, as its last page said. */
  let head = opts.head
  /** Items applied so far: the first batches are smaller, so that applying starts as soon as there is something. */
  let applied = 0
  for (;;) {
    ctx.checkpoint()
    // The pages that have arrived, up to a batch: the next ones are read while these are applied. When less than a
    // batch is left before the head, waiting for a batch would be waiting for the last page and applying all of it
    // after that: half of what is left is waited for instead, so that the last batches shrink.
    const left = head - cursor
    const min = left < MIN_BATCH ? Math.max(1, Math.ceil(left / 2)) : Math.min(MIN_BATCH, applied + 1)
    const batch = await pages.take(min, MAX_BATCH)
    if (!batch.length) break
    const page = batch[batch.length - 1]!
    head = page.head
    const serialOf = new Map<VersionItem, number>(held.map((h) => [h.item, h.serial]))
    const items: MirrorItem[] = held.map((h) => ({ kind: 'version', data: h.item }))
    for (const p of batch) {
      await breathe()
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
      localIntent: opts.localIntent,
      refusedArchives: opts.refusedArchives,
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
    cursor = pageEnd
    applied += items.length
  }
  // Versions whose node never came: it was removed upstream, or skipped.
  addProblems(
    ctx,
    held.map((h) => ({ kind: 'version' as const, id: h.item.id, reason: `its node "${h.item.node_id}" is not in the upstream's feed` })),
  )
  if (held.length) await updateSource(deps.db, source.id, { cursor_serial: cursor })
  if (passMark) await removeUnseen(ctx, passMark)
  await updateSource(deps.db, source.id, { runs_since_full: full ? 0 : source.runs_since_full + 1 })
}

/**
 * Items applied in one transaction (whole feed pages): MIN_BATCH while more are coming (fewer until as many were
 * applied, so that applying starts at once), since each batch reads and rewrites the nodes whose versions it
 * adds, and each commit every page of the store it touched: a first sync of 52,000 versions took 10% less CPU in
 * batches of 16,000 than of 8,000. At most MAX_BATCH, since a serving registry's writes wait for the transaction.
 */
const MIN_BATCH = 16_000
const MAX_BATCH = 16_000
/** Pages read ahead of the ones being applied, at most. */
export const AHEAD = 16

/**
 * A full pass's own mark: its start time, made unique (two passes may start within one millisecond) by 32
 * random bits. Short: every mirrored row holds the mark of the last full pass that saw it.
 */
export const newPassMark = (deps: Deps) => `${timestamp(deps)} ${crypto.randomUUID().slice(0, 8)}`

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
