/**
 * Feed pages read ahead of their use, in order: another registry-mirror's feed, or any page source (a bundle's
 * rows). A bounded number of pages waits unused; the consumer takes what has arrived, in batches.
 */
import { fetchFeedEnvelope, feedPageItems, type FeedPageItems } from './feed-client'
import type { FeedEnvelope } from '../domain/feed'
import type { UpstreamHttp } from './http-client'

export interface FeedReader {
  /** The pages that have arrived: at least `min` items while more are coming, at most `max` (one page at least); [] at the end. */
  take(min: number, max: number): Promise<FeedPageItems[]>
  /** Stops reading (a request under way is abandoned); pages not taken are dropped. */
  close(): void
}

/** Whether a page is the feed's last: it reaches the head, or is empty. */
export const isLast = (page: Pick<FeedPageItems, 'next' | 'head'> & { size: number }) => !(page.next < page.head && page.size > 0)

const lastPage = (page: FeedPageItems) => isLast({ ...page, size: page.items.length + page.problems.length })

/** Pages in arrival order, a failure after the pages before it, and a wake-up for whoever waits. */
function pageQueue(onTaken: () => void) {
  const ready: FeedPageItems[] = []
  let ended = false
  let failure: unknown
  let wake: (() => void) | undefined
  const notify = () => {
    const w = wake
    wake = undefined
    w?.()
  }
  const count = () => ready.reduce((n, p) => n + p.items.length, 0)
  return {
    get size() {
      return ready.length
    },
    push(page: FeedPageItems) {
      ready.push(page)
      if (lastPage(page)) ended = true
      notify()
    },
    fail(err: unknown) {
      failure ??= err
      ended = true
      notify()
    },
    /** No more pages: those not taken are dropped. */
    close() {
      ready.length = 0
      ended = true
      notify()
    },
    async take(min: number, max: number, ahead: number): Promise<FeedPageItems[]> {
      // Wait for `min` items while more are coming: each commit rewrites every page of the store it touched.
      while (!ended && count() < min && ready.length < ahead) await new Promise<void>((r) => (wake = r))
      if (!ready.length && failure) throw failure
      const out: FeedPageItems[] = []
      let items = 0
      while (ready.length && (out.length === 0 || items + ready[0]!.items.length <= max)) {
        const page = ready.shift()!
        items += page.items.length
        out.push(page)
      }
      if (out.length) onTaken()
      return out
    },
  }
}

/**
 * Reads pages with `next`, one after another ahead of their use, keeping at most `ahead` unused; `onClose` runs
 * when the reader is closed (to abandon a request under way).
 */
export function readAhead(
  first: FeedPageItems,
  next: (since: number) => Promise<FeedPageItems>,
  ahead: number,
  onClose: () => void = () => {},
): FeedReader {
  let room: (() => void) | undefined
  const queue = pageQueue(() => room?.())
  queue.push(first)
  let closed = lastPage(first)
  void (async () => {
    let last = first
    while (!closed) {
      if (queue.size >= ahead) await new Promise<void>((r) => (room = r))
      if (closed) break
      try {
        last = await next(last.next)
      } catch (err) {
        if (!closed) queue.fail(err) // else the request was abandoned on purpose
        break
      }
      if (closed) break
      queue.push(last)
      closed ||= lastPage(last)
    }
  })()
  return {
    take: (min, max) => queue.take(min, max, ahead),
    close() {
      closed = true
      queue.close()
      room?.()
      onClose()
    },
  }
}

/**
 * Reads another registry-mirror's feed after `first`, ahead of its use. Each page is asked for as soon as the
 * envelope of the one before is read, before that one's entities are checked: the upstream renders it while
 * this thread checks and applies. (Read in this thread: a worker's parse and check would cost less here than
 * handing its pages over, which on a busy machine slowed a sync down; see docs/benchmarks.md.)
 */
export function readFeed(http: UpstreamHttp, base: string, first: FeedPageItems, opts: { ahead: number }): FeedReader {
  const stop = new AbortController()
  const request = (since: number) => {
    const envelope = fetchFeedEnvelope(http, base, since, stop.signal)
    envelope.catch(() => {}) // a failure is reported when the page is awaited
    return { since, envelope }
  }
  let pending: { since: number; envelope: Promise<FeedEnvelope> } | undefined
  const next = async (since: number): Promise<FeedPageItems> => {
    const { envelope } = pending?.since === since ? pending : request(since)
    const page = await envelope
    pending = isLast({ ...page, size: page.changes.length }) ? undefined : request(page.next)
    return feedPageItems(page, since, base)
  }
  return readAhead(first, next, opts.ahead, () => stop.abort())
}
