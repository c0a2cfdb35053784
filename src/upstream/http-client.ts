/**
 * The HTTP client for upstream registries: bounded concurrency, a request rate, a timeout until the headers and
 * for every pause in a body, and retries with exponential backoff and jitter on network errors, timeouts,
 * truncated bodies, 5xx, 408 and 429 (honouring Retry-After), but not another registry-mirror's 502/504 saying its
 * own upstream failed (final: it remembers the failure). A download's consumer is bounded as its body is (see
 * consumed-within), so a transfer's place is always freed. Every JSON reply is validated before use. For
 * requests a person waits on, a deadline bounds the tries and a circuit breaker remembers hosts found unreachable.
 */
import pLimit from 'p-limit'
import * as v from 'valibot'
import { plural } from '../domain/plural'
import { jsonNestsWithin, MAX_TEXT_DEPTH } from '../domain/json-bounds'
import { mapAddresses } from '../domain/addresses'
import { withoutUrlSecrets } from '../domain/urls'
import { consumedWithin } from './consumed-within'
import { hostOf, type CircuitBreaker, type HostDown, type Outcome } from './circuit-breaker'
import { refusedDestination, type Resolve } from './destinations'
import { requestHosts } from './request-hosts'

export interface UpstreamHttpOptions {
  /** Requests in flight at once. */
  concurrency: number
  /** Requests started per second at most; 0 for no limit. */
  ratePerSecond: number
  /** Longest wait for the headers, and for each chunk of a body (a whole body: see JSON_REPLY_TIMEOUTS, MIN_BYTES_PER_SECOND). */
  timeoutMs: number
  /** Tries per request, the first one included. */
  attempts: number
  /** The first backoff; it doubles with each retry, up to 30 s. */
  backoffMs: number
  /** A Retry-After longer than this ends the run rather than stalling it. */
  maxRetryAfterMs: number
  fetch?: typeof fetch
  /** Waits between tries (tests pass one that records and returns at once). */
  sleep?: (ms: number) => Promise<void>
  signal?: AbortSignal
  /** Told about each retry, for logs. */
  onRetry?: (info: { url: string; attempt: number; waitMs: number; reason: string }) => void
  /**
   * For requests a person waits on: the most time a request's tries may take until an answer's headers (no try
   * starts, and no wait for headers lasts, past it; a body then keeps to its pace).
   */
  deadlineMs?: number
  /** Remembers hosts found unreachable: requests to them fail at once until a probe finds them back. */
  breaker?: CircuitBreaker
  /** Resolves a host name to its addresses, to refuse reserved ones (destinations.ts; tests pass their own). */
  resolve?: Resolve
}

export const DEFAULT_HTTP: UpstreamHttpOptions = {
  concurrency: 4,
  ratePerSecond: 0,
  timeoutMs: 30_000,
  attempts: 6,
  backoffMs: 500,
  maxRetryAfterMs: 10 * 60_000,
}

/** `unreachable`: no answer worth having (network, timeouts, 5xx after every retry); `status`: a 4xx; `invalid`: a reply we refuse. */
export type UpstreamErrorKind = 'unreachable' | 'status' | 'invalid' | 'aborted'

export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamErrorKind,
    /** Any address in it is shown without userinfo or query: the message reaches logs, answers and output. */
    message: string,
    readonly status?: number,
    /** Whether the last try ran out of time (no answer, a stall, a body too slow) rather than failed. */
    readonly timedOut = false,
  ) {
    super(withoutUrlSecrets(message))
  }

  /** The origin of the host whose failure this is: the request's, or a redirect's target. */
  host?: string
  /** Whether that host had answered, and its body then failed (too slow, stalled, cut off): not the host down. */
  inBody?: boolean
}

/** Not asked: the host was found unreachable a moment ago, and the breaker has not let a probe through yet. */
export class UpstreamDown extends UpstreamError {
  constructor(
    url: string,
    readonly down: HostDown,
  ) {
    super(
      'unreachable',
      `${url}: not asked, the upstream has been unreachable since ${down.since.toISOString()} (${down.reason})`,
      undefined,
      down.timedOut,
    )
    this.host = down.host
  }
}

/**
 * A registry-mirror's answer that its own upstream failed (or sent bytes it refused): it answered, and asking again
 * in seconds finds the same (it remembers its upstream's failure), so the answer is final rather than retried.
 */
const FINAL_UPSTREAM_CODES = new Set(['upstream_failed', 'upstream_timeout', 'archive_refused'])
/** Of such an answer's message, what is said on: enough to say why, not an upstream's essay. */
const MAX_RELAYED_MESSAGE = 300

/**
 * One try's bounds: how long it may wait for headers; the breaker's say before each host it is sent to (the reason
 * not to, when that host is known down), and whom to tell once a host has answered.
 */
interface Try {
  headersWithinMs: number
  admit(url: string): HostDown | undefined
  answered(url: string): void
}

type AbortableInit = RequestInit & { signal: AbortSignal }

/** Answers followed to their Location. */
const REDIRECTS = new Set([301, 302, 303, 307, 308])
/** Redirects followed for one try, as fetch follows them. */
const MAX_REDIRECTS = 20

/** A failure worth another try. */
class Transient extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    readonly timedOut = false,
  ) {
    super(message)
  }

  /** The origin of the host whose failure this is: the request's, or a redirect's target. */
  host?: string
  /** Whether that host had answered, and its body then failed (too slow, stalled, cut off): not the host down. */
  inBody?: boolean
}

/** Redirects that lead nowhere: the host answered, and asking again gets the same. */
const redirectsRefused = (url: string, why: string) =>
  new UpstreamError('invalid', `${url}: the upstream's redirects were refused (${why})`)

/** The error, said to be `host`'s doing unless it already names a host. */
function blamed(err: unknown, host: string): unknown {
  if ((err instanceof Transient || err instanceof UpstreamError) && err.host === undefined) err.host = host
  return err
}

const isHttp = (url: URL) => url.protocol === 'http:' || url.protocol === 'https:'

/**
 * A whole JSON reply takes at most this many timeouts: one dripping a byte a second never stalls, so the wait
 * per chunk alone would let it hold a run forever.
 */
export const JSON_REPLY_TIMEOUTS = 4

/** An archive may be large, so it has no deadline but a pace: this many bytes a second on average, once the timeout has passed. */
export const MIN_BYTES_PER_SECOND = 16 * 1024

/** What a body must keep up with: why it is too slow, given the bytes received and the time since it began. */
type Pace = (received: number, elapsedMs: number) => string | undefined

const jsonPace =
  (timeoutMs: number): Pace =>
  (_received, elapsedMs) =>
    elapsedMs > JSON_REPLY_TIMEOUTS * timeoutMs ? `the reply took longer than ${JSON_REPLY_TIMEOUTS * timeoutMs} ms` : undefined

const downloadPace =
  (timeoutMs: number): Pace =>
  (received, elapsedMs) =>
    elapsedMs > timeoutMs && received < (MIN_BYTES_PER_SECOND * elapsedMs) / 1000
      ? `the body came slower than ${MIN_BYTES_PER_SECOND} bytes a second`
      : undefined

/** The registry's error body of a 502 or 504 whose failure is final (`code: message`); undefined for any other. */
async function finalRegistryError(res: Response, timeoutMs: number, abort: () => void): Promise<string | undefined> {
  if (!res.body || !(res.headers.get('content-type') ?? '').includes('application/json')) return undefined
  try {
    const body = guardedBody(res, timeoutMs, jsonPace(timeoutMs), abort)
    const said = (await readJson(body, 8192)) as { error?: unknown; message?: unknown } | null
    if (typeof said?.error !== 'string' || !FINAL_UPSTREAM_CODES.has(said.error)) return undefined
    const message = typeof said.message === 'string' ? said.message.slice(0, MAX_RELAYED_MESSAGE) : ''
    return `${said.error}: ${message}`
  } catch {
    return undefined // not readable as one: a gateway's 502, retried as before
  }
}

export interface UpstreamHttp {
  /** GET a JSON document and validate it; a 404 is an UpstreamError with status 404. `signal` abandons this request. */
  json<S extends v.GenericSchema>(url: string, schema: S, opts?: { maxBytes?: number; signal?: AbortSignal }): Promise<v.InferOutput<S>>
  /**
   * GET bytes and hand the body to `consume`; a cut, stalled or failed transfer is tried again from the start.
   * `signal` abandons this transfer; `onBodyEnd` is told once its body has all come (or failed), before `consume` ends.
   */
  download<T>(
    url: string,
    consume: (body: ReadableStream<Uint8Array>, response: Response) => Promise<T>,
    opts?: { headers?: Record<string, string>; signal?: AbortSignal; onBodyEnd?: () => void },
  ): Promise<T | { notModified: true }>
  /** Whether a request made now would wait for one of the `concurrency` places (all are taken). */
  full(): boolean
  /** Whether requests wait for one of the places now (all are taken, and more are queued). */
  waiting(): boolean
  readonly options: UpstreamHttpOptions
}

function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/** The body, failing when a chunk takes longer than `timeoutMs`, it falls behind `pace`, or the length differs from Content-Length. */
function guardedBody(res: Response, timeoutMs: number, pace: Pace, abort: () => void): ReadableStream<Uint8Array> {
  const reader = res.body!.getReader()
  const declared = res.headers.get('content-encoding') ? undefined : Number(res.headers.get('content-length') ?? NaN)
  const started = performance.now()
  let received = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Transient(`the body stalled for ${timeoutMs} ms`, undefined, true)), timeoutMs)
      })
      try {
        const { done, value } = await Promise.race([reader.read(), stalled])
        if (done) {
          if (declared !== undefined && !Number.isNaN(declared) && received !== declared) {
            throw new Transient(`the body was cut off after ${received} of ${declared} bytes`)
          }
          controller.close()
          return
        }
        received += value.byteLength
        const slow = pace(received, performance.now() - started)
        if (slow) throw new Transient(slow, undefined, true)
        controller.enqueue(value)
      } catch (err) {
        abort()
        reader.cancel().catch(() => {})
        controller.error(
          err instanceof Transient || err instanceof UpstreamError ? err : new Transient(`the body failed: ${(err as Error).message}`),
        )
      } finally {
        clearTimeout(timer)
      }
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

/** The body parsed as JSON, refused past `maxBytes`; one cut short is worth another try. */
async function readJson(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<unknown> {
  const parts: Uint8Array[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > maxBytes) throw new UpstreamError('invalid', `the reply is larger than ${maxBytes} bytes`)
    parts.push(chunk)
  }
  if (!jsonNestsWithin(parts, MAX_TEXT_DEPTH)) throw new UpstreamError('invalid', `the reply nests deeper than ${MAX_TEXT_DEPTH} levels`)
  try {
    // Decoded and parsed natively, without a joined copy and a JS string first: a quarter less time on a feed page.
    return await new Response(new Blob(parts)).json()
  } catch {
    throw new Transient('the reply is not complete JSON')
  }
}

export function createUpstreamHttp(options: Partial<UpstreamHttpOptions> = {}): UpstreamHttp {
  const o: UpstreamHttpOptions = { ...DEFAULT_HTTP, ...options }
  const doFetch = o.fetch ?? fetch
  const sleep = o.sleep ?? ((ms: number) => Bun.sleep(ms))
  const limit = pLimit(Math.max(1, o.concurrency))
  let nextStart = 0

  /** A wait cut short when `stop` fires: a run being stopped does not sit out a backoff (up to 30 s) or its pace. */
  async function wait(ms: number, stop: AbortSignal | undefined): Promise<void> {
    if (!stop) return sleep(ms)
    if (stop.aborted) return
    let onAbort = () => {}
    const aborted = new Promise<void>((resolve) => (onAbort = resolve))
    stop.addEventListener('abort', onAbort, { once: true })
    await Promise.race([sleep(ms), aborted]).finally(() => stop.removeEventListener('abort', onAbort))
  }

  async function paced<T>(fn: () => Promise<T>, stop: AbortSignal | undefined): Promise<T> {
    if (o.ratePerSecond > 0) {
      const now = Date.now()
      const start = Math.max(now, nextStart)
      nextStart = start + 1000 / o.ratePerSecond
      if (start > now) await wait(start - now, stop)
    }
    return fn()
  }

  /** One try: the response with a guarded body, or a Transient / UpstreamError; `stop` is the run's signal or this request's. */
  async function attempt<T>(
    url: string,
    headers: Record<string, string>,
    pace: Pace,
    use: (res: Response, body: ReadableStream<Uint8Array>) => Promise<T>,
    stop: AbortSignal | undefined,
    t: Try,
  ) {
    if (stop?.aborted) throw new UpstreamError('aborted', 'stopped')
    const controller = new AbortController()
    const onAbort = () => controller.abort()
    stop?.addEventListener('abort', onAbort)
    const timer = setTimeout(() => controller.abort(), t.headersWithinMs)
    // Sent to every redirect's target as well (they are followed below, not by fetch, which drops credentials on a
    // move to another host): no credential may ever be among them.
    const sent = { 'user-agent': 'registry-mirror', ...headers }
    const init = { headers: sent, signal: controller.signal, redirect: 'manual' as const }
    /** Where the try is: the request's URL, then each redirect's target; a failure is its host's. */
    let at = url
    try {
      let res: Response
      // Redirects are followed here, each target admitted by the breaker as its own host: a storage host or CDN
      // that fails is found down, not the registry that sent there (whose other archives may be fine).
      for (let hops = 0; ; hops++) {
        const refused = await refusal(at, controller.signal, stop, t.headersWithinMs)
        if (refused) throw refused
        const down = t.admit(at)
        if (down) throw new UpstreamDown(url, down)
        res = await ask(at, init, stop, t.headersWithinMs)
        const location = REDIRECTS.has(res.status) ? res.headers.get('location') : null
        if (location === null) break
        res.body?.cancel().catch(() => {})
        t.answered(at)
        // Redirects that lead nowhere are final: asking again gets the same (a loop cost 100-odd requests a try).
        const next = URL.parse(location, at)
        if (!next || !isHttp(next)) throw redirectsRefused(url, 'to an address not http(s)')
        if (hops === MAX_REDIRECTS) throw redirectsRefused(url, `more than ${MAX_REDIRECTS}`)
        at = next.href
      }
      clearTimeout(timer)
      if (res.status === 502 || res.status === 504) {
        const final = await finalRegistryError(res, o.timeoutMs, () => controller.abort())
        if (final) throw new UpstreamError('status', `HTTP ${res.status} from ${at}: ${final}`, res.status)
      }
      if (res.status === 429 || res.status === 408 || res.status >= 500) {
        res.body?.cancel().catch(() => {})
        throw new Transient(
          `HTTP ${res.status}`,
          res.status === 429 || res.status === 503 ? retryAfter(res.headers.get('retry-after')) : undefined,
        )
      }
      if (res.status >= 400) {
        res.body?.cancel().catch(() => {})
        throw new UpstreamError('status', `HTTP ${res.status} from ${at}`, res.status)
      }
      t.answered(at)
      if (res.status === 304) return { notModified: true } as const
      const body = res.body ? guardedBody(res, o.timeoutMs, pace, () => controller.abort()) : new Blob([]).stream()
      return await use(res, body).catch((err: unknown) => {
        if (err instanceof Transient) err.inBody = true
        throw err
      })
    } catch (err) {
      throw blamed(err, hostOf(at))
    } finally {
      clearTimeout(timer)
      stop?.removeEventListener('abort', onAbort)
    }
  }

  /**
   * Why `url` may not be asked at all (a reserved address, destinations.ts), found within the try's time: final, as
   * asking again finds the same.
   */
  async function refusal(url: string, signal: AbortSignal, stop: AbortSignal | undefined, withinMs: number) {
    let why: string | undefined
    try {
      why = await untilAborted(refusedDestination(url, o.resolve), signal)
    } catch {
      if (stop?.aborted) throw new UpstreamError('aborted', 'stopped')
      throw new Transient(`no answer within ${withinMs} ms (resolving the host)`, undefined, true)
    }
    return why === undefined ? undefined : new UpstreamError('invalid', `${url}: ${why}`)
  }

  /** One GET of `url`, not following redirects: its answer's headers, or why none came. */
  async function ask(url: string, init: AbortableInit, stop?: AbortSignal, withinMs = o.timeoutMs) {
    try {
      return await doFetch(url, init)
    } catch (err) {
      if (stop?.aborted) throw new UpstreamError('aborted', 'stopped')
      if (init.signal.aborted) throw new Transient(`no answer within ${withinMs} ms`, undefined, true)
      throw new Transient(`cannot connect: ${(err as Error).message}`)
    }
  }

  /**
   * The tries of one request, each given how long it may wait for headers. The deadline is the upstream's time: it
   * starts when the first try gets its slot, not while the request waits behind our own transfers and rate (its
   * caller bounds that wait), which a try left with no time would blame on the host as a timeout.
   */
  async function tries<T>(
    url: string,
    run: (t: Try) => Promise<T>,
    stop: AbortSignal | undefined,
    hosts: Omit<Try, 'headersWithinMs'>,
  ): Promise<T> {
    let deadline = Infinity
    const left = () => Math.max(1, Math.round(Math.min(o.timeoutMs, deadline - performance.now())))
    let last: Transient | undefined
    for (let n = 1; ; n++) {
      let late = false
      try {
        return await limit(() =>
          paced(() => {
            if (n === 1 && o.deadlineMs !== undefined) deadline = performance.now() + o.deadlineMs
            if (last && performance.now() >= deadline) {
              late = true // a retry whose slot came after the deadline: not tried
              throw last
            }
            return run({ ...hosts, headersWithinMs: left() })
          }, stop),
        )
      } catch (err) {
        if (!(err instanceof Transient)) throw err
        if (stop?.aborted) throw new UpstreamError('aborted', 'stopped')
        last = err
        const tried = plural(late ? n - 1 : n, 'try', 'tries')
        const { host, inBody } = err
        const gaveUp = (why: string, timedOut = err.timedOut) =>
          Object.assign(new UpstreamError('unreachable', `${url}: ${why}`, undefined, timedOut), { host, inBody })
        if (late) throw gaveUp(`${err.message} (after ${tried}, out of time)`)
        if (n >= o.attempts) throw gaveUp(`${err.message} (after ${tried})`)
        if (err.retryAfterMs !== undefined && err.retryAfterMs > o.maxRetryAfterMs) {
          throw gaveUp(`the upstream asks to retry after ${Math.ceil(err.retryAfterMs / 1000)} s`, false)
        }
        const backoff = Math.min(30_000, o.backoffMs * 2 ** (n - 1))
        const waitMs = Math.max(err.retryAfterMs ?? 0, Math.round(backoff / 2 + (Math.random() * backoff) / 2))
        if (performance.now() + waitMs >= deadline) throw gaveUp(`${err.message} (after ${tried}, out of time)`)
        o.onRetry?.({ url: withoutUrlSecrets(url), attempt: n, waitMs, reason: withoutUrlSecrets(err.message) })
        await wait(waitMs, stop)
      }
    }
  }

  /**
   * A request's tries, unless the breaker knows its host to be down; how they ended tells the breaker, about each
   * host they were sent to. A probe's body may take minutes: its host is back at the answer's headers.
   */
  async function withRetries<T>(url: string, run: (t: Try) => Promise<T>, stop = o.signal): Promise<T> {
    const hosts = requestHosts(o.breaker)
    const down = hosts.admit(url)
    if (down) throw new UpstreamDown(url, down)
    try {
      const result = await tries(url, run, stop, hosts)
      hosts.settle()
      return result
    } catch (err) {
      hosts.settle({ host: (err as { host?: string }).host ?? hostOf(url), outcome: breakerOutcome(err, url) })
      throw err
    }
  }

  return {
    options: o,
    async json(url, schema, opts = {}) {
      const stop = either(o.signal, opts.signal)
      const parsed = await withRetries(
        url,
        (t) =>
          attempt(
            url,
            { accept: 'application/json' },
            jsonPace(o.timeoutMs),
            (_res, body) => readJson(body, opts.maxBytes ?? 64 * 1024 * 1024),
            stop,
            t,
          ),
        stop,
      )
      if (parsed && typeof parsed === 'object' && 'notModified' in parsed) throw new UpstreamError('invalid', `${url}: unexpected 304`)
      const result = v.safeParse(schema, parsed)
      if (!result.success) throw invalidReply(url, result.issues)
      return result.output
    },
    download(url, consume, opts = {}) {
      const stop = either(o.signal, opts.signal)
      // Our side of a transfer bounded as the upstream's is: the place it holds is freed whatever the consumer does.
      const consumed = (res: Response, body: ReadableStream<Uint8Array>) =>
        consumedWithin(body, o.timeoutMs, (taken) => consume(taken, res), opts.onBodyEnd)
      return withRetries(url, (t) => attempt(url, opts.headers ?? {}, downloadPace(o.timeoutMs), consumed, stop, t), stop)
    },
    full: () => limit.activeCount + limit.pendingCount >= Math.max(1, o.concurrency),
    waiting: () => limit.pendingCount > 0,
  }
}

export const isTransient = (err: unknown) => err instanceof Transient

/** `promise`, or a rejection as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** Aborted when either is. */
const either = (a?: AbortSignal, b?: AbortSignal) => (a && b ? AbortSignal.any([a, b]) : (a ?? b))

/**
 * What a request's failure says of the host it names. A body that failed after the answer (too slow, stalled, cut
 * off) says nothing: it is one transfer's fate, and turning away the host's other downloads for it was wrong.
 */
function breakerOutcome(err: unknown, url: string): Outcome {
  if (!(err instanceof UpstreamError) || err.kind === 'aborted' || err.inBody) return 'unknown'
  if (err.kind !== 'unreachable') return { up: true } // it answered: a 4xx, or a reply we refuse
  return { up: false, reason: withoutUrl(err.message, url), timedOut: err.timedOut }
}

/**
 * A failure's message for the breaker (and the log) without any address: the log names the host, and a path may say
 * more than it should. The message starts with the request's URL, and the runtime's may name it or a redirect's.
 */
function withoutUrl(message: string, url: string): string {
  const rest = message.replace(`${withoutUrlSecrets(url)}: `, '')
  return mapAddresses(rest, ({ trimmed, end }) => `the URL${rest.slice(trimmed, end)}`)
}

/** The error for a reply that is not what the schema says, naming the first issue. */
export function invalidReply(url: string, issues: readonly [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]]): UpstreamError {
  const issue = issues[0]
  return new UpstreamError('invalid', `${url}: unexpected reply (${v.getDotPath(issue) ?? 'body'}: ${issue.message})`)
}
