/**
 * A Vidu-compatible video provider on 127.0.0.1 for tests (a real HTTP server, so the client under test is the
 * real one): `POST /ent/v2/start-end2video`, `GET /ent/v2/tasks/{id}/creations` (processing, then success),
 * the finished videos, and callbacks to the callback_url a task was started with. It records what reached it
 * and answers as a test tells it to.
 */
import type { Deps } from '../../src/services/deps'
import { createVideoProvider } from '../../src/upstream/video-provider'

export type Behaviour =
  'ok' | 'hang' | 'garbage' | { status: number; body?: unknown; headers?: Record<string, string> } | { reply: unknown }

export interface ReceivedStart {
  authorization: string | null
  body: Record<string, unknown>
  /** Each image URL as the provider fetched it (when it fetches): status, type and bytes. */
  fetched: { status: number; type: string | null; bytes: Uint8Array }[]
}

export interface FakeProvider {
  url: string
  key: string
  starts: ReceivedStart[]
  polls: { taskId: string; authorization: string | null }[]
  /** How the next starts are answered. */
  onStart: Behaviour
  /** How the next polls are answered ('ok' walks each task through processing, then success). */
  onPoll: Behaviour
  /** Fetch the http(s) images of each start before answering, as a real provider does. */
  fetchImages: boolean
  /** The `created_at` of the next 'ok' starts' replies, as the provider writes it (undefined: left out). */
  createdAt: unknown
  /** POSTs `body` to the callback_url the n-th task was started with; the response as received. */
  callBack(n: number, body: unknown): Promise<Response>
  reset(): void
  stop(): Promise<void>
}

/** When the provider says a task was created, unless a test says otherwise. */
const CREATED_AT = '2026-01-02T03:04:06.000Z'

export const VIDEO_BYTES = new TextEncoder().encode('\u0000\u0000\u0000\u0018ftypmp42 a fake video')

export async function startFakeProvider(key = 'vidu-test-key-7f3a9c'): Promise<FakeProvider> {
  const hanging: (() => void)[] = []
  const pollCounts = new Map<string, number>()
  const tasks: string[] = []

  const answer = async (behaviour: Behaviour, ok: () => unknown): Promise<Response> => {
    if (behaviour === 'hang') return new Promise<Response>((resolve) => hanging.push(() => resolve(new Response('late'))))
    if (behaviour === 'garbage')
      return new Response('<html>gateway says hello</html>', { status: 200, headers: { 'content-type': 'text/html' } })
    if (behaviour === 'ok') return Response.json(ok())
    if ('reply' in behaviour) return Response.json(behaviour.reply)
    return Response.json(behaviour.body ?? {}, { status: behaviour.status, headers: behaviour.headers })
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const authorization = req.headers.get('authorization')
      if (url.pathname.startsWith('/files/')) return new Response(VIDEO_BYTES, { headers: { 'content-type': 'video/mp4' } })
      if (authorization !== `Token ${provider.key}`) {
        return Response.json({ code: 401, reason: 'Unauthorized', message: 'invalid api key' }, { status: 401 })
      }
      if (req.method === 'POST' && url.pathname === '/ent/v2/start-end2video') {
        const body = (await req.json()) as Record<string, unknown>
        const fetched: ReceivedStart['fetched'] = []
        if (provider.fetchImages) {
          for (const image of (body.images as string[]) ?? []) {
            if (!/^https?:/.test(image)) continue
            const res = await fetch(image)
            fetched.push({ status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) })
          }
        }
        provider.starts.push({ authorization, body, fetched })
        return answer(provider.onStart, () => {
          const taskId = `8172400349238${String(tasks.length).padStart(5, '0')}`
          tasks.push(taskId)
          return {
            task_id: taskId,
            state: 'created',
            model: body.model,
            images: body.images,
            prompt: body.prompt,
            duration: body.duration,
            seed: body.seed === 0 || body.seed === undefined ? 1234567 : body.seed,
            resolution: body.resolution,
            movement_amplitude: body.movement_amplitude,
            credits: 4,
            created_at: provider.createdAt,
          }
        })
      }
      const poll = /^\/ent\/v2\/tasks\/([^/]+)\/creations$/.exec(url.pathname)
      if (req.method === 'GET' && poll) {
        const taskId = decodeURIComponent(poll[1]!)
        provider.polls.push({ taskId, authorization })
        if (provider.onPoll === 'ok' && !tasks.includes(taskId)) {
          return Response.json({ code: 404, reason: 'TaskNotFound', message: 'task not found' }, { status: 404 })
        }
        const n = (pollCounts.get(taskId) ?? 0) + 1
        pollCounts.set(taskId, n)
        return answer(provider.onPoll, () =>
          n === 1
            ? { state: 'processing', err_code: '', credits: 4, progress: 50, creations: [] }
            : {
                state: 'success',
                err_code: '',
                credits: 4,
                payload: '',
                creations: [
                  {
                    id: `creation-${taskId}`,
                    url: `${provider.url}/files/${taskId}.mp4`,
                    cover_url: `${provider.url}/files/${taskId}.jpg`,
                    watermarked_url: `${provider.url}/files/${taskId}-wm.mp4`,
                  },
                ],
              },
        )
      }
      return Response.json({ code: 404, reason: 'NotFound', message: 'no such route' }, { status: 404 })
    },
  })

  const provider: FakeProvider = {
    url: `http://127.0.0.1:${server.port}`,
    key,
    starts: [],
    polls: [],
    onStart: 'ok',
    onPoll: 'ok',
    fetchImages: false,
    createdAt: CREATED_AT,
    callBack(n, body) {
      const target = provider.starts[n]?.body.callback_url
      if (typeof target !== 'string') throw new Error(`start ${n} has no callback_url`)
      return fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    },
    reset() {
      provider.starts.length = 0
      provider.polls.length = 0
      provider.onStart = 'ok'
      provider.onPoll = 'ok'
      provider.fetchImages = false
      provider.createdAt = CREATED_AT
    },
    async stop() {
      for (const release of hanging.splice(0)) release()
      await server.stop(true)
    },
  }
  return provider
}

/** A valid PNG: 1x1 pixel. */
export const PNG = Uint8Array.from(
  Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'),
)
export const JPEG_HEAD = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01])
export const pngDataUri = (bytes: Uint8Array = PNG) => `data:image/png;base64,${Buffer.from(bytes).toString('base64')}`

/** Points the test app's video proxy at the fake provider, through the real client. */
export function useProvider(t: { deps: Deps }, fake: FakeProvider, opts: { timeoutMs?: number } = {}): void {
  t.deps.video.provider = createVideoProvider({ baseUrl: fake.url, key: fake.key, timeoutMs: opts.timeoutMs ?? 5000, log: t.deps.log })
}
