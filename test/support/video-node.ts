/**
 * The host application's video node, as far as the registry sees it: the body it sends to start a
 * start-and-end-frame task (pydantic's model_dump with its defaults, unset fields left out), and the reply
 * models it validates, written as valibot schemas with the same required fields and types (pydantic does not
 * turn numbers into strings, and takes only whole numbers as int).
 */
import * as v from 'valibot'

export const nodeStartBody = (images: string[], prompt = 'a paper boat drifts across a pond') => ({
  model: 'viduq1',
  prompt,
  duration: 5,
  seed: 0,
  aspect_ratio: '16:9',
  resolution: '1080p',
  movement_amplitude: 'auto',
  images,
})

const int = v.pipe(v.number(), v.integer())

export const NODE_MODELS = {
  UploadResponse: v.object({ download_url: v.string(), upload_url: v.string() }),
  TaskCreationResponse: v.object({ task_id: v.string(), state: v.string(), created_at: v.string(), code: v.nullish(int) }),
  TaskStatusResponse: v.object({
    state: v.string(),
    err_code: v.nullish(v.string()),
    progress: v.nullish(v.number()),
    credits: v.nullish(int),
    creations: v.array(v.object({ id: v.string(), url: v.string(), cover_url: v.string() })),
  }),
}

/** Throws with the issues when `body` would fail the node's model. */
export function assertNodeAccepts(model: keyof typeof NODE_MODELS, body: unknown): void {
  const result = v.safeParse(NODE_MODELS[model], body)
  if (!result.success) throw new Error(`${model} refuses ${JSON.stringify(body)}: ${v.summarize(result.issues)}`)
}
