/**
 * Worker entry: follows another registry-mirror's change feed from a serial, fetching, parsing and checking
 * each page (see feed-reader.ts), and sends the pages in order while it has credit. The next page is asked for
 * as soon as a page's envelope is read, so the upstream renders it while this thread checks the entities.
 */
import type { FeedEnvelope } from '../domain/feed'
import { FeedError, fetchFeedEnvelope, feedPageItems } from './feed-client'
import { createUpstreamHttp, UpstreamError, type UpstreamErrorKind, type UpstreamHttpOptions } from './http-client'

type Settings = Omit<UpstreamHttpOptions, 'fetch' | 'sleep' | 'signal' | 'onRetry'>

export type FeedWorkerRequest =
  | { start: { base: string; since: number; http: Settings; credit: number; now: string } }
  /** Pages the worker may send beyond those it has; `now` stamps the items from here on. */
  | { credit: number; now: string }

export type FeedWorkerReply =
  /** A FeedPageItems as JSON: a string crosses threads at no cost, where a structured clone costs more than the checks it spares. */
  | { page: string }
  | { retry: { url: string; attempt: number; waitMs: number; reason: string } }
  | { error: { message: string; kind?: UpstreamErrorKind; status?: number; feed?: boolean } }

declare const self: Worker

let credit = 0
let now = ''
let wake: (() => void) | undefined

const send = (reply: FeedWorkerReply) => self.postMessage(reply)

async function follow(base: string, since: number, settings: Settings): Promise<void> {
  const http = createUpstreamHttp({ ...settings, onRetry: (retry) => send({ retry }) })
  const read = (after: number) => fetchFeedEnvelope(http, base, after)
  let after = since
  let envelope: Promise<FeedEnvelope> | undefined = read(after)
  while (envelope) {
    const page: FeedEnvelope = await envelope
    const last = !(page.next < page.head && page.changes.length > 0)
    // Asked for before this page is checked: one page ahead of the credit at most.
    envelope = last ? undefined : read(page.next)
    envelope?.catch(() => {}) // its failure is reported when it is awaited
    const items = feedPageItems(page, after, now)
    while (credit <= 0) await new Promise<void>((r) => (wake = r))
    credit--
    send({ page: JSON.stringify(items) })
    after = page.next
  }
}

// Installed before anything is awaited: a message that arrives with no handler is dropped.
self.onmessage = (event: MessageEvent<FeedWorkerRequest>) => {
  const message = event.data
  if ('start' in message) {
    const { base, since, http, credit: initial } = message.start
    credit = initial
    now = message.start.now
    follow(base, since, http).catch((err: unknown) => {
      const error =
        err instanceof FeedError
          ? { message: err.message, feed: true }
          : err instanceof UpstreamError
            ? { message: err.message, kind: err.kind, status: err.status }
            : { message: err instanceof Error ? err.message : String(err) }
      send({ error })
    })
  } else {
    credit += message.credit
    now = message.now
    const w = wake
    wake = undefined
    w?.()
  }
}
