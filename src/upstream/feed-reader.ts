/**
 * Feed pages read ahead of their use, in order: another registry-mirror's feed from a worker thread, or any
 * page source (a bundle's rows) in this thread. A bounded number of pages waits unused; the consumer takes what
 * has arrived, in batches.
 */
import type { FeedPageItems } from './feed-client'
import type { FeedWorkerReply, FeedWorkerRequest } from './feed-worker'
import { FeedError } from './feed-client'
import { UpstreamError, type UpstreamHttp } from './http-client'

export interface FeedReader {
  /** The pages that have arrived: at least `min` items while more are coming, at most `max` (one page at least); [] at the end. */
  take(min: number, max: number): Promise<FeedPageItems[]>
  /** Stops reading (a worker is ended); pages not taken are dropped. */
  close(): void
}

/** Whether a page is the feed's last: it reaches the head, or is empty. */
export const isLast = (page: FeedPageItems) => !(page.next < page.head && page.items.length + page.problems.length > 0)

/** Pages in arrival order, a failure after the pages before it, and a wake-up for whoever waits. */
function pageQueue(onTaken: (pages: number) => void) {
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
      if (isLast(page)) ended = true
      notify()
    },
    fail(err: unknown) {
      failure ??= err
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
      if (out.length) onTaken(out.length)
      return out
    },
  }
}

/** Reads pages with `next` (in this thread), one after another ahead of their use, keeping at most `ahead` unused. */
export function readAhead(first: FeedPageItems, next: (since: number) => Promise<FeedPageItems>, ahead: number): FeedReader {
  let room: (() => void) | undefined
  const queue = pageQueue(() => room?.())
  queue.push(first)
  let closed = isLast(first)
  void (async () => {
    let last = first
    while (!closed) {
      if (queue.size >= ahead) await new Promise<void>((r) => (room = r))
      if (closed) break
      try {
        last = await next(last.next)
      } catch (err) {
        queue.fail(err)
        break
      }
      queue.push(last)
      closed ||= isLast(last)
    }
  })()
  return {
    take: (min, max) => queue.take(min, max, ahead),
    close() {
      closed = true
      room?.()
    },
  }
}

/**
 * Reads another registry-mirror's feed after `first` in a worker thread, which fetches, parses and checks each
 * page: the upstream renders the next page while this thread writes the last ones, instead of waiting for this
 * thread's event loop. The worker uses `http`'s settings (not its hooks: fetch, sleep) and reports its retries
 * to `http`'s onRetry; `now` stamps the items (it is sent along as pages are taken).
 */
export function readFeedInWorker(
  http: UpstreamHttp,
  base: string,
  first: FeedPageItems,
  opts: { ahead: number; now: () => string },
): FeedReader {
  if (isLast(first)) return readAhead(first, () => Promise.reject(new Error('past the last page')), opts.ahead)
  const worker = new Worker(new URL('./feed-worker.ts', import.meta.url))
  const send = (message: FeedWorkerRequest) => worker.postMessage(message)
  const queue = pageQueue((pages) => send({ credit: pages, now: opts.now() }))
  queue.push(first)
  let closed = false
  const close = () => {
    if (closed) return
    closed = true
    http.options.signal?.removeEventListener('abort', onAbort)
    worker.terminate()
  }
  const onAbort = () => {
    queue.fail(new UpstreamError('aborted', 'stopped'))
    close()
  }
  worker.onmessage = (event: MessageEvent<FeedWorkerReply>) => {
    const reply = event.data
    if ('page' in reply) queue.push(JSON.parse(reply.page) as FeedPageItems)
    else if ('retry' in reply) http.options.onRetry?.(reply.retry)
    else {
      const e = reply.error
      queue.fail(e.feed ? new FeedError(e.message) : e.kind ? new UpstreamError(e.kind, e.message, e.status) : new Error(e.message))
    }
  }
  worker.onerror = (event) => queue.fail(new Error(`the feed reader failed: ${event.message}`))
  if (http.options.signal?.aborted) onAbort()
  http.options.signal?.addEventListener('abort', onAbort)
  const { fetch: _fetch, sleep: _sleep, signal: _signal, onRetry: _onRetry, ...settings } = http.options
  // At most `ahead` pages wait unused, the first one included; each page taken lets the worker read one more.
  send({ start: { base, since: first.next, http: settings, credit: opts.ahead - 1, now: opts.now() } })
  return {
    take: (min, max) => queue.take(min, max, opts.ahead),
    close,
  }
}
