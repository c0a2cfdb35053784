/**
 * The client of a Vidu-compatible video provider: start a start-and-end-frame task, read a task's creations.
 * Every call runs under a timeout and is never retried (a start is not idempotent: a retry could pay twice);
 * every reply is validated; failures come out as the AppErrors the proxy answers with. The key goes into the
 * Authorization header and nowhere else: provider text passed on is scrubbed of it.
 */
import * as v from 'valibot'
import { jsonNestsWithin, MAX_TEXT_DEPTH } from '../domain/json-bounds'
import { withoutUrlSecrets } from '../domain/urls'
import { AppError, badGateway, gatewayTimeout } from '../errors'
import type { Log } from '../log'

export interface ProviderOptions {
  /** Base URL without a trailing slash, e.g. https://api.vidu.com */
  baseUrl: string
  key: string
  timeoutMs: number
  log: Log
}

/** A task id safe to store and to put back into a URL path. */
const TaskId = v.pipe(
  v.union([v.string(), v.pipe(v.number(), v.safeInteger())], 'must be a string'),
  v.transform(String),
  v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1-128 letters, digits, ".", "_", ":" or "-"'),
)
const State = v.pipe(v.string(), v.regex(/^[a-z_]{1,32}$/, 'must be a lower-case word'))
const Credits = v.nullish(v.pipe(v.number(), v.minValue(0)))

/**
 * A start reply: the task is started (and paid) once it arrives, so only what the proxy cannot do without (the task's
 * id and state) can make it unreadable; a count, code, seed or time it cannot read is left out (created_at is read by
 * normalizeTime, which takes our time for one it cannot read).
 */
const StartReply = v.object({
  task_id: TaskId,
  state: State,
  credits: v.fallback(Credits, undefined),
  created_at: v.optional(v.unknown()),
  code: v.fallback(v.nullish(v.pipe(v.number(), v.safeInteger())), undefined),
  seed: v.fallback(v.nullish(v.pipe(v.number(), v.safeInteger())), undefined),
})

const Creation = v.object({
  id: TaskId,
  url: v.pipe(v.string(), v.minLength(1)),
  cover_url: v.nullish(v.string(), ''),
  watermarked_url: v.nullish(v.string()),
})

const CreationsReply = v.object({
  state: State,
  err_code: v.pipe(v.nullish(v.union([v.string(), v.number()]), ''), v.transform(String)),
  credits: Credits,
  progress: v.nullish(v.number()),
  creations: v.nullish(v.array(Creation), []),
})

/** What the provider POSTs to a task's callback URL: the body of a poll, with the task's id. */
const CallbackBody = v.object({ ...CreationsReply.entries, id: v.nullish(TaskId), task_id: v.nullish(TaskId) })

export type ProviderTask = v.InferOutput<typeof StartReply>
export type ProviderCreations = v.InferOutput<typeof CreationsReply>

export interface VideoProvider {
  startEnd2Video(body: Record<string, unknown>): Promise<ProviderTask>
  creations(taskId: string): Promise<ProviderCreations>
}

export type ProviderCallback = v.InferOutput<typeof CallbackBody>

/** The callback body, or one line per problem. */
export function parseProviderCallback(
  body: unknown,
): { callback: ProviderCallback; problems: [] } | { callback?: undefined; problems: string[] } {
  const result = v.safeParse(CallbackBody, body)
  if (result.success) return { callback: result.output, problems: [] }
  return { problems: result.issues.map((i) => `${v.getDotPath(i) ?? 'body'}: ${i.input === undefined ? 'is required' : i.message}`) }
}

/** Replies are small JSON; anything larger is not a reply of this API. */
const MAX_REPLY_BYTES = 8 * 1024 * 1024

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of res.body) {
    size += chunk.byteLength
    if (size > MAX_REPLY_BYTES) throw new RangeError('reply too large')
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

const parseJson = (text: string): unknown => {
  if (!jsonNestsWithin(Buffer.from(text), MAX_TEXT_DEPTH)) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export function createVideoProvider(opts: ProviderOptions): VideoProvider {
  // Without the key, and without any address's query or user (a presigned image or result URL's signature).
  const scrub = (text: string) => withoutUrlSecrets(text.split(opts.key).join('***')).slice(0, 300)

  /** What the provider said about a refusal, one line per part, for `details` (never raw HTML or the key). */
  function providerDetails(text: string): string[] {
    const body = parseJson(text)
    if (!body || typeof body !== 'object') return []
    const o = body as Record<string, unknown>
    const err = typeof o.error === 'object' && o.error ? (o.error as Record<string, unknown>) : undefined
    const reason = [o.reason, o.code, err?.type].find((x) => typeof x === 'string' && x)
    const message = [o.message, err?.message, typeof o.error === 'string' ? o.error : undefined].find((x) => typeof x === 'string' && x)
    const lines = reason || message ? [`provider: ${[reason, message].filter(Boolean).join(': ')}`] : []
    if (Array.isArray(o.details)) lines.push(...o.details.filter((d): d is string => typeof d === 'string').slice(0, 5))
    return lines.map(scrub)
  }

  function refusal(res: Response, text: string, op: 'start' | 'poll'): AppError {
    const details = providerDetails(text)
    const s = res.status
    if (s === 401) return new AppError(401, 'unauthorized', "the video provider refused this server's API key", {}, details)
    if (s === 402) return new AppError(402, 'payment_required', 'the video provider account has no credits left', {}, details)
    if (s === 429) {
      const retryAfter = res.headers.get('retry-after')
      const headers: Record<string, string> = retryAfter && /^\d{1,6}$/.test(retryAfter) ? { 'Retry-After': retryAfter } : {}
      return new AppError(
        429,
        'rate_limited',
        'the video provider is limiting requests from this server; try again later',
        headers,
        details,
      )
    }
    if (s === 404 && op === 'poll') return new AppError(404, 'not_found', 'the video provider does not know this task', {}, details)
    if (s >= 400 && s < 500) return new AppError(400, 'bad_request', 'the video provider refused the request', {}, details)
    if (s >= 500) return badGateway(`the video provider failed (HTTP ${s})`, details)
    return badGateway(`the video provider answered HTTP ${s}`)
  }

  async function call<S extends v.GenericSchema>(op: 'start' | 'poll', path: string, schema: S, body?: unknown): Promise<v.InferOutput<S>> {
    const started = performance.now()
    const signal = AbortSignal.timeout(opts.timeoutMs)
    let res: Response
    let text: string
    try {
      res = await fetch(opts.baseUrl + path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          Authorization: `Token ${opts.key}`,
          Accept: 'application/json',
          ...(body !== undefined && { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        // A redirect would carry the key to wherever it points: refused, like any other unexpected answer.
        redirect: 'manual',
        signal,
      })
      text = await readCapped(res)
    } catch (err) {
      const timedOut = signal.aborted
      opts.log.warn('video.provider_unreachable', { op, timedOut, error: timedOut ? 'timeout' : scrub((err as Error).name) })
      if (timedOut) throw gatewayTimeout(`the video provider did not answer within ${opts.timeoutMs / 1000} s`)
      throw badGateway(
        err instanceof RangeError ? 'the video provider sent a reply that is too large' : 'the video provider could not be reached',
      )
    }
    const ms = Math.round(performance.now() - started)
    if (res.status < 200 || res.status > 299) {
      opts.log.warn('video.provider_refused', { op, status: res.status, ms })
      throw refusal(res, text, op)
    }
    const reply = parseJson(text)
    const result = v.safeParse(schema, reply)
    if (!result.success) {
      const issue = result.issues[0]
      opts.log.warn('video.provider_garbage', { op, status: res.status, ms })
      const path = v.getDotPath(issue)
      throw badGateway('the video provider sent a reply that could not be read', [
        reply === undefined
          ? 'reply: is not JSON'
          : scrub(`reply${path ? `.${path}` : ''}: ${issue.input === undefined ? 'is missing' : issue.message}`),
      ])
    }
    opts.log.debug('video.provider_call', { op, status: res.status, ms })
    return result.output
  }

  return {
    startEnd2Video: (body) => call('start', '/ent/v2/start-end2video', StartReply, body),
    creations: (taskId) => call('poll', `/ent/v2/tasks/${encodeURIComponent(taskId)}/creations`, CreationsReply),
  }
}
