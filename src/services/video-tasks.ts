/**
 * The video proxy's tasks: start one at the provider (validated input, rate limited per caller, never retried)
 * and record who started it; poll it for its caller or an admin; take the provider's callbacks. What is stored
 * is a summary of the request: no image data, no signed query strings, no credential.
 */
import { timingSafeEqual } from 'node:crypto'
import { hashToken, newId, newSecretToken } from '../domain/ids'
import { normalizeTime } from '../domain/timestamps'
import type { VideoCreationsJson, VideoTaskJson } from '../domain/wire'
import { AppError, badGateway, forbidden, notConfigured, notFound, tooManyRequests } from '../errors'
import { isUniqueViolation } from '../store/db'
import type { VideoTaskRow } from '../store/schema'
import { FINISHED_STATES, findVideoTask, findVideoTaskByTaskId, insertVideoTask, updateVideoTask } from '../store/video'
import { MAX_STORED_INT } from '../domain/stored-int'
import { parseProviderCallback, type VideoProvider } from '../upstream/video-provider'
import { commitWrite } from './changes'
import { timestamp, type Deps } from './deps'
import { callerMayRead, type VideoCaller } from './video-caller'

/** A validated start request (the route's schema makes it): only these fields reach the provider. */
export interface VideoTaskInput {
  model: string
  images: string[]
  prompt?: string
  duration?: number
  seed?: number
  aspect_ratio?: string
  resolution?: string
  movement_amplitude?: string
  style?: string
  callback_url?: string
  priority?: number
  enhance?: boolean
}

export const CALLBACK_PATH = '/proxy/provider/callback'
const FINISHED = new Set<string>(FINISHED_STATES)

export function requireProvider(deps: Pick<Deps, 'video'>): VideoProvider {
  if (!deps.video.provider) {
    throw notConfigured('The video provider is not configured on this registry (the operator sets --video-provider-url)')
  }
  return deps.video.provider
}

/** A URL without its query and fragment (they may carry signatures); a data: URI as its type and size. */
function summarizeImage(ref: string): string {
  const data = /^data:([^;,]*);base64,/i.exec(ref)
  if (data) return `data:${data[1]};base64 (${ref.length - data[0].length} characters)`
  const url = URL.parse(ref)
  return url ? `${url.origin}${url.pathname}` : '(invalid)'
}

function requestSummary(input: VideoTaskInput): string {
  const { images, callback_url, ...rest } = input
  return JSON.stringify({
    ...rest,
    images: images.map(summarizeImage),
    ...(callback_url && { callback_url: summarizeImage(callback_url) }),
  })
}

/**
 * The provider's count as a whole number the store keeps: a count past the column's range is kept at its top, the
 * same on every backend. The task is started (and paid) when a count arrives, so it must never make the write fail.
 */
const wholeCredits = (n: number | null | undefined) => (n == null ? undefined : Math.min(Math.round(n), MAX_STORED_INT))

export async function startVideoTask(deps: Deps, caller: VideoCaller, input: VideoTaskInput): Promise<VideoTaskJson> {
  const provider = requireProvider(deps)
  const waitMs = await deps.video.startLimiter(caller.key, deps.now().getTime())
  if (waitMs > 0) throw tooManyRequests('Too many video tasks started; try again later', waitMs / 1000)
  // The provider calls back to us unless the caller asked for its own callback (the provider then calls it).
  const id = newId()
  const secret = input.callback_url ? undefined : newSecretToken()
  const callbackUrl = input.callback_url ?? `${deps.settings.publicUrl}${CALLBACK_PATH}?task=${id}&secret=${secret}`
  const task = await provider.startEnd2Video({ ...input, callback_url: callbackUrl })
  const credits = wholeCredits(task.credits) ?? 0
  try {
    await commitWrite(deps, async (w) => {
      await insertVideoTask(w.db, {
        id,
        task_id: task.task_id,
        caller: caller.key,
        state: task.state,
        err_code: '',
        credits,
        request_json: requestSummary(input),
        callback_secret_hash: secret ? hashToken(secret) : null,
        created_at: w.now,
        updated_at: w.now,
      })
    })
  } catch (err) {
    if (!isUniqueViolation(err)) {
      // Started and paid, but not recorded: the operator reconciles it with the provider from this line.
      deps.log.error('video.task_unrecorded', {
        task: task.task_id,
        caller: caller.user?.id ?? 'anonymous',
        credits,
        error: (err as Error).message,
      })
      throw err
    }
    deps.log.error('video.task_id_reused', { task: task.task_id })
    throw badGateway('the video provider answered with the id of a task it had started before')
  }
  deps.log.info('video.task_started', { task: task.task_id, caller: caller.user?.id ?? 'anonymous', state: task.state, credits })
  return {
    ...input,
    ...(task.seed != null && { seed: task.seed }), // the seed the provider chose when asked for a random one (0)
    task_id: task.task_id,
    state: task.state,
    credits,
    created_at: normalizeTime(task.created_at, timestamp(deps)),
    ...(task.code != null && { code: task.code }),
  }
}

/**
 * Keeps the stored state current until the task finishes; the first finished report (`success` or `failed`, with
 * its error code and credits) is final, as callbacks may arrive late, repeated or out of order.
 */
async function recordState(deps: Deps, task: VideoTaskRow, next: Pick<VideoTaskRow, 'state' | 'err_code' | 'credits'>): Promise<void> {
  if (FINISHED.has(task.state)) return
  if (task.state === next.state && task.err_code === next.err_code && task.credits === next.credits) return
  await commitWrite(deps, (w) => updateVideoTask(w.db, task.id, next, w.now))
}

/** The task's state and results, asked of the provider; a task of someone else is "not found", so ids do not leak. */
export async function videoTaskCreations(deps: Deps, caller: VideoCaller, taskId: string): Promise<VideoCreationsJson> {
  const provider = requireProvider(deps)
  const task = await findVideoTaskByTaskId(deps.db, taskId)
  if (!task || !callerMayRead(caller, task.caller)) throw notFound('task not found')
  const reply = await deps.video.polls(task.task_id, deps.now().getTime(), () => provider.creations(task.task_id))
  const credits = wholeCredits(reply.credits) ?? task.credits
  await recordState(deps, task, { state: reply.state, err_code: reply.err_code, credits })
  return {
    id: task.task_id,
    state: reply.state,
    err_code: reply.err_code,
    credits,
    ...(reply.progress != null && { progress: reply.progress }),
    creations: reply.creations.map((c) => ({
      id: c.id,
      url: c.url,
      cover_url: c.cover_url,
      ...(c.watermarked_url && { watermarked_url: c.watermarked_url }),
    })),
  }
}

const sameSecret = (secret: string, hash: string) => timingSafeEqual(Buffer.from(hashToken(secret)), Buffer.from(hash))

/** A provider's callback: accepted only with the task's own secret in its URL. */
export async function acceptProviderCallback(
  deps: Deps,
  req: { task: string | undefined; secret: string | undefined; body: unknown },
): Promise<{ state: string }> {
  const task = req.task ? await findVideoTask(deps.db, req.task) : undefined
  if (!task?.callback_secret_hash || !req.secret || !sameSecret(req.secret, task.callback_secret_hash)) {
    throw forbidden('this callback URL is not valid', 'invalid_signature')
  }
  const { callback, problems } = parseProviderCallback(req.body)
  if (!callback) throw new AppError(400, 'bad_request', problems[0]!, {}, problems)
  const named = callback.task_id ?? callback.id
  if (named != null && named !== task.task_id) throw new AppError(400, 'bad_request', 'the callback names another task', {}, [])
  const credits = wholeCredits(callback.credits) ?? task.credits
  await recordState(deps, task, { state: callback.state, err_code: callback.err_code, credits })
  const stored = (await findVideoTask(deps.db, task.id))!.state
  // A report that changed nothing (the task had finished) says so: the log is where the operator sees it.
  deps.log.info('video.task_callback', { task: task.task_id, state: callback.state, ...(stored !== callback.state && { stored }) })
  return { state: stored }
}
