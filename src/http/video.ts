/**
 * The video proxy (mounted at /proxy/provider and at the upstream's /proxy/vidu): start a start-and-end-frame
 * task, poll its creations, and the provider's callback. Errors use the proxy body `{message, details}`.
 */
import { Hono } from 'hono'
import * as v from 'valibot'
import { base64Length, imageReferenceProblem } from '../domain/images'
import { boundedObject } from '../domain/json-bounds'
import { VIDEO_CHOICES, VideoCreationsSchema, VideoTaskSchema } from '../domain/wire'
import type { Deps } from '../services/deps'
import { videoCaller } from '../services/video-caller'
import { acceptProviderCallback, requireProvider, startVideoTask, videoTaskCreations } from '../services/video-tasks'
import { limitBody } from './body-limit'
import { identity, type Env } from './identity'
import { route } from './route-spec'
import { q } from './validate'

/** An optional field: null means not sent, as everywhere in this API. */
const opt = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(
    v.nullish(schema),
    v.transform((x) => x ?? undefined),
  )
const wholeNumber = (message: string) => v.pipe(v.number(message), v.safeInteger(message))
const choice = <T extends readonly string[]>(options: T) => opt(v.picklist(options, `must be one of ${options.join(', ')}`))
const MAX_PROMPT = 1500

function startBody(maxImageBytes: number) {
  const image = v.pipe(
    v.string('must be a string: an image URL or a data: URI'),
    v.rawCheck(({ dataset, addIssue }) => {
      const problem = dataset.typed ? imageReferenceProblem(dataset.value, maxImageBytes) : undefined
      if (problem) addIssue({ message: problem })
    }),
  )
  return v.object({
    model: v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.nonEmpty('must not be empty'),
      v.maxLength(100, 'must be at most 100 characters'),
    ),
    images: v.pipe(
      v.array(image, 'must be a list of 2 images: the start frame and the end frame'),
      v.length(2, 'must hold exactly 2 images: the start frame and the end frame'),
    ),
    // The limit counts characters as the host application does (code points), not UTF-16 units.
    prompt: opt(
      v.pipe(
        v.string('must be a string'),
        // Counted only when it may fit: a code point takes at most 2 UTF-16 units.
        v.check(
          (s) => s.length <= MAX_PROMPT || (s.length <= 2 * MAX_PROMPT && [...s].length <= MAX_PROMPT),
          `must be at most ${MAX_PROMPT} characters`,
        ),
      ),
    ),
    duration: opt(v.pipe(wholeNumber('must be a whole number of seconds'), v.minValue(1, 'must be at least 1 second'))),
    seed: opt(
      v.pipe(
        wholeNumber('must be a whole number from 0 to 2147483647'),
        v.minValue(0, 'must be a whole number from 0 to 2147483647'),
        v.maxValue(2147483647, 'must be a whole number from 0 to 2147483647'),
      ),
    ),
    aspect_ratio: choice(VIDEO_CHOICES.aspect_ratio),
    resolution: choice(VIDEO_CHOICES.resolution),
    movement_amplitude: choice(VIDEO_CHOICES.movement_amplitude),
    style: choice(VIDEO_CHOICES.style),
    callback_url: opt(
      v.pipe(
        v.string('must be a string'),
        v.maxLength(2048, 'must be at most 2048 characters'),
        v.check((s) => URL.parse(s)?.protocol === 'https:' && !/\s/.test(s), 'must be an https:// URL'),
      ),
    ),
    priority: opt(wholeNumber('must be a whole number')),
    enhance: opt(v.boolean('must be true or false')),
  })
}

export function videoRoutes(deps: Deps) {
  const maxImageBytes = deps.settings.video.maxImageBytes
  const specs = {
    start: route({
      summary: 'Start a video from a start frame and an end frame at the video provider',
      tag: 'video',
      auth: 'video',
      errorBody: 'proxy',
      description:
        'Validated before anything is sent (400 with one line per problem); 503 when no provider is configured; 429 past the per-caller limit. Provider refusals: 400, or 401/402/429 as the provider said; 502 for a failed or unreadable provider, 504 when it does not answer in time. Never retried.',
      body: startBody(maxImageBytes),
      response: VideoTaskSchema,
    }),
    creations: route({
      summary: "A video task's state and results, asked of the provider (its caller or an admin only; 404 for others)",
      tag: 'video',
      auth: 'video',
      errorBody: 'proxy',
      response: VideoCreationsSchema,
    }),
    callback: route({
      summary: "The provider's report of a task's state: accepted only with the task's secret in the URL",
      tag: 'video',
      auth: 'signed',
      errorBody: 'proxy',
      query: v.object({ task: q.text, secret: q.text }),
      body: boundedObject(),
      response: v.object({ state: v.string() }),
    }),
  }
  const caller = identity(deps, { apiKey: true })
  // Two data: URIs at the image limit, plus the other fields.
  const startLimit = limitBody(2 * base64Length(maxImageBytes) + 256 * 1024)

  const app = new Hono<Env>()
  app.post('/start-end2video', specs.start, startLimit, caller, async (c) => {
    requireProvider(deps) // an unconfigured proxy says so before asking who calls
    const who = videoCaller(deps, c.var.actor)
    return c.json(await startVideoTask(deps, who, await specs.start.body(c)), 200)
  })
  app.get('/tasks/:taskId/creations', specs.creations, caller, async (c) => {
    requireProvider(deps)
    const who = videoCaller(deps, c.var.actor)
    return c.json(await videoTaskCreations(deps, who, c.req.param('taskId')), 200)
  })
  app.post('/callback', specs.callback, limitBody(1024 * 1024), async (c) => {
    const { task, secret } = specs.callback.query(c)
    return c.json(await acceptProviderCallback(deps, { task, secret, body: await specs.callback.body(c) }), 200)
  })
  return app
}
