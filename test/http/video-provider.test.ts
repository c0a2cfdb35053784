/**
 * The video proxy and its provider: every provider failure mapped (never retried, nothing stored), the rate
 * limit, polling a task, and the provider's callbacks.
 */
import { describe, expect, test } from 'bun:test'
import { createRateLimiter } from '../../src/services/rate-limit'
import { POLL_REUSE_MS } from '../../src/services/video-polls'
import { createVideoProvider } from '../../src/upstream/video-provider'
import { addUser } from '../support/app'
import { assertNodeAccepts, nodeStartBody } from '../support/video-node'
import { useProvider, type FakeProvider } from '../support/video-provider'
import { alice, call, fake, IMAGES, setUp, start, t, useVideoSuite } from '../support/video-suite'

useVideoSuite()

describe('provider failures: mapped, never retried, nothing stored', () => {
  const cases: [string, FakeProvider['onStart'], number, { message: string; details: string[] }, Record<string, string>?][] = [
    [
      'its 400 validation error',
      { status: 400, body: { code: 400, reason: 'ImageDownloadFailure', message: 'could not download image' } },
      400,
      { message: 'the video provider refused the request', details: ['provider: ImageDownloadFailure: could not download image'] },
    ],
    [
      'its 403',
      { status: 403, body: { code: 403, reason: 'Forbidden', message: 'nope' } },
      400,
      { message: 'the video provider refused the request', details: ['provider: Forbidden: nope'] },
    ],
    [
      'its 401',
      { status: 401, body: { reason: 'Unauthorized' } },
      401,
      { message: "the video provider refused this server's API key", details: ['provider: Unauthorized'] },
    ],
    [
      'its 402',
      { status: 402, body: { message: 'insufficient credits' } },
      402,
      { message: 'the video provider account has no credits left', details: ['provider: insufficient credits'] },
    ],
    [
      'its 429',
      { status: 429, body: { reason: 'TooManyRequests' }, headers: { 'retry-after': '7' } },
      429,
      { message: 'the video provider is limiting requests from this server; try again later', details: ['provider: TooManyRequests'] },
      { 'retry-after': '7' },
    ],
    [
      'its 500',
      { status: 500, body: { reason: 'InternalServiceFailure' } },
      502,
      { message: 'the video provider failed (HTTP 500)', details: ['provider: InternalServiceFailure'] },
    ],
    ['its 503 with an HTML page', { status: 503, body: '<html>' }, 502, { message: 'the video provider failed (HTTP 503)', details: [] }],
    [
      'a reply that is not JSON',
      'garbage',
      502,
      { message: 'the video provider sent a reply that could not be read', details: ['reply: is not JSON'] },
    ],
    [
      'a reply without task_id',
      { reply: { state: 'created', credits: 1 } },
      502,
      { message: 'the video provider sent a reply that could not be read', details: ['reply.task_id: is missing'] },
    ],
    [
      'a reply with a task id unfit for a URL',
      { reply: { task_id: '../../admin', state: 'created' } },
      502,
      {
        message: 'the video provider sent a reply that could not be read',
        details: ['reply.task_id: must be 1-128 letters, digits, ".", "_", ":" or "-"'],
      },
    ],
    [
      'a redirect',
      { status: 307, headers: { location: 'https://elsewhere.example/' } },
      502,
      { message: 'the video provider answered HTTP 307', details: [] },
    ],
  ]
  for (const [name, behaviour, status, body, headers] of cases) {
    test(`${name}: ${status}`, async () => {
      fake.onStart = behaviour
      const res = await start()
      expect({ status: res.status, body: res.body }).toEqual({ status, body })
      for (const [k, value] of Object.entries(headers ?? {})) expect(res.headers.get(k)).toBe(value)
      expect(fake.starts).toHaveLength(1)
      expect(await t.deps.db.selectFrom('video_tasks').selectAll().execute()).toEqual([])
    })
  }

  test('a provider that does not answer: 504 after the timeout, asked once', async () => {
    // Long enough for a loaded machine to deliver the request; the provider then never answers.
    useProvider(t, fake, { timeoutMs: 500 })
    fake.onStart = 'hang'
    const res = await start()
    expect(res.status).toBe(504)
    expect(res.body).toEqual({ message: 'the video provider did not answer within 0.5 s', details: [] })
    expect(fake.starts).toHaveLength(1)
  })

  test('a provider that drops the connection: 502', async () => {
    // A listener that hangs up at once (a freed port could be taken by another process meanwhile).
    const hangUp = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { open: (socket) => void socket.end(), data: () => {} } })
    try {
      const baseUrl = `http://127.0.0.1:${hangUp.port}`
      t.deps.video.provider = createVideoProvider({ baseUrl, key: fake.key, timeoutMs: 2000, log: t.deps.log })
      const res = await start()
      expect(res.status).toBe(502)
      expect(res.body).toEqual({ message: 'the video provider could not be reached', details: [] })
    } finally {
      hangUp.stop(true)
    }
  })

  test('a provider that repeats the key in its error: passed on without it', async () => {
    fake.onStart = { status: 400, body: { reason: 'FieldInvalid', message: `bad key Token ${fake.key} for this model` } }
    const res = await start()
    expect(res.body.details).toEqual(['provider: FieldInvalid: bad key Token *** for this model'])
  })

  test('a task that failed at once is passed on with its code (the node reports it)', async () => {
    fake.onStart = { reply: { task_id: 'T-1', state: 'failed', code: 4001, credits: 0 } }
    const res = await start()
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ task_id: 'T-1', state: 'failed', code: 4001, credits: 0, created_at: t.clock.now.toISOString() })
  })
})

describe('rate limit per caller', () => {
  test('past the limit: 429 with Retry-After; other callers and the next minute go on; refused requests do not count', async () => {
    t.deps.video.startLimiter = createRateLimiter(2, 60_000)
    const bob = await addUser(t, 'bob')
    expect((await start({ images: [] })).status).toBe(400)
    expect((await start()).status).toBe(200)
    expect((await start()).status).toBe(200)
    const limited = await start()
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ message: 'Too many video tasks started; try again later', details: [] })
    expect(limited.headers.get('retry-after')).toBe('60')
    expect((await start(nodeStartBody(IMAGES), { 'x-api-key': bob })).status).toBe(200)
    t.clock.now = new Date(t.clock.now.getTime() + 60_000)
    expect((await start()).status).toBe(200)
    expect(fake.starts).toHaveLength(4)
  })
})

/** Moves the clock past the window in which polls of a task share the provider's answer. */
const afterPollWindow = () => (t.clock.now = new Date(t.clock.now.getTime() + POLL_REUSE_MS))

describe('polling a task', () => {
  test('its caller sees it go from processing to success, in the shape the node validates; the stored state follows', async () => {
    const { task_id } = (await start()).body
    const first = await call('GET', `/proxy/vidu/tasks/${task_id}/creations`, { headers: { 'x-api-key': alice } })
    expect(first.status).toBe(200)
    assertNodeAccepts('TaskStatusResponse', first.body)
    expect(first.body).toEqual({ id: task_id, state: 'processing', err_code: '', credits: 4, progress: 50, creations: [] })
    afterPollWindow()
    const second = await call('GET', `/proxy/provider/tasks/${task_id}/creations`, { token: alice })
    assertNodeAccepts('TaskStatusResponse', second.body)
    expect(second.body).toEqual({
      id: task_id,
      state: 'success',
      err_code: '',
      credits: 4,
      creations: [
        {
          id: `creation-${task_id}`,
          url: `${fake.url}/files/${task_id}.mp4`,
          cover_url: `${fake.url}/files/${task_id}.jpg`,
          watermarked_url: `${fake.url}/files/${task_id}-wm.mp4`,
        },
      ],
    })
    expect(fake.polls).toEqual([
      { taskId: task_id, authorization: `Token ${fake.key}` },
      { taskId: task_id, authorization: `Token ${fake.key}` },
    ])
    expect((await t.deps.db.selectFrom('video_tasks').select('state').executeTakeFirstOrThrow()).state).toBe('success')
  })

  test('another user gets 404 as for a task that does not exist; an admin sees it; the provider is not asked for others', async () => {
    const { task_id } = (await start()).body
    const mallory = await addUser(t, 'mallory')
    const admin = await addUser(t, 'ada', { admin: true })
    const stranger = await call('GET', `/proxy/vidu/tasks/${task_id}/creations`, { token: mallory })
    const unknown = await call('GET', '/proxy/vidu/tasks/999/creations', { token: mallory })
    expect(stranger).toMatchObject({ status: 404, body: { message: 'task not found', details: [] } })
    expect(unknown).toMatchObject({ status: 404, body: { message: 'task not found', details: [] } })
    expect(fake.polls).toHaveLength(0)
    expect((await call('GET', `/proxy/vidu/tasks/${task_id}/creations`, { token: admin })).status).toBe(200)
    expect((await call('GET', `/proxy/vidu/tasks/${task_id}/creations`)).status).toBe(401)
  })

  test('a provider reply missing creations reads as an empty list; credits become whole numbers; a garbage reply is 502', async () => {
    const { task_id } = (await start()).body
    fake.onPoll = { reply: { state: 'queueing', credits: 3.6, err_code: null } }
    const res = await call('GET', `/proxy/vidu/tasks/${task_id}/creations`, { token: alice })
    assertNodeAccepts('TaskStatusResponse', res.body)
    expect(res.body).toEqual({ id: task_id, state: 'queueing', err_code: '', credits: 4, creations: [] })
    fake.onPoll = { reply: { state: 'success', creations: [{ id: 'c' }] } }
    afterPollWindow()
    const bad = await call('GET', `/proxy/vidu/tasks/${task_id}/creations`, { token: alice })
    expect(bad).toMatchObject({ status: 502, body: { details: ['reply.creations.0.url: is missing'] } })
    fake.onPoll = { status: 404, body: { reason: 'TaskNotFound' } }
    expect((await call('GET', `/proxy/vidu/tasks/${task_id}/creations`, { token: alice })).status).toBe(404)
  })

  test('polls of a task within the window share one provider answer, at once or one after another; a failed one is asked again', async () => {
    const { task_id } = (await start()).body
    const other = (await start()).body.task_id
    const poll = (id: string) => call('GET', `/proxy/vidu/tasks/${id}/creations`, { token: alice })
    const together = await Promise.all([poll(task_id), poll(task_id), poll(task_id)])
    expect(together.map((r) => r.body.state)).toEqual(['processing', 'processing', 'processing'])
    expect(fake.polls).toHaveLength(1)
    t.clock.now = new Date(t.clock.now.getTime() + POLL_REUSE_MS - 1)
    expect((await poll(task_id)).body.state).toBe('processing')
    expect(fake.polls).toHaveLength(1)
    // Another task is its own: asked although the first was asked just now.
    expect((await poll(other)).status).toBe(200)
    expect(fake.polls.map((p) => p.taskId)).toEqual([task_id, other])
    afterPollWindow()
    expect((await poll(task_id)).body.state).toBe('success')
    expect(fake.polls).toHaveLength(3)
    // An answer that failed is not kept: the next poll, in the same window, asks again.
    fake.onPoll = { status: 500, body: {} }
    afterPollWindow()
    expect((await poll(other)).status).toBe(502)
    fake.onPoll = 'ok'
    expect((await poll(other)).status).toBe(200)
    expect(fake.polls).toHaveLength(5)
  })
})

describe('provider callbacks', () => {
  const callbackPath = () => {
    const url = new URL(fake.starts[0]!.body.callback_url as string)
    return { url, path: `${url.pathname}${url.search}` }
  }

  test('with the right secret the stored state is updated; with a wrong or missing one, refused and unchanged', async () => {
    const { task_id } = (await start()).body
    const { url } = callbackPath()
    const task = url.searchParams.get('task')!
    const wrong = await call('POST', `/proxy/provider/callback?task=${task}&secret=${'A'.repeat(43)}`, {
      body: { id: task_id, state: 'success' },
    })
    const missing = await call('POST', `/proxy/provider/callback?task=${task}`, { body: { state: 'success' } })
    const unknown = await call('POST', `/proxy/provider/callback?task=nope&secret=${url.searchParams.get('secret')}`, {
      body: { state: 'success' },
    })
    for (const res of [wrong, missing, unknown])
      expect(res).toMatchObject({ status: 403, body: { message: 'this callback URL is not valid', details: [] } })
    const state = async () => await t.deps.db.selectFrom('video_tasks').select(['state', 'credits']).executeTakeFirstOrThrow()
    expect(await state()).toEqual({ state: 'created', credits: 4 })
    const right = await call('POST', callbackPath().path, { body: { id: task_id, state: 'processing', credits: 5, creations: [] } })
    expect(right).toMatchObject({ status: 200, body: { state: 'processing' } })
    expect(await state()).toEqual({ state: 'processing', credits: 5 })
  })

  test('a callback naming another task, or not a task report, is a 400; a finished task stays finished', async () => {
    const { task_id } = (await start()).body
    const { path } = callbackPath()
    expect((await call('POST', path, { body: { id: 'other', state: 'success' } })).status).toBe(400)
    expect((await call('POST', path, { body: { state: 7 } })).body.details).toEqual(['state: Invalid type: Expected string but received 7'])
    expect((await call('POST', path, { body: { task_id, state: 'failed', err_code: 'AuditSubmitIllegal' } })).body.state).toBe('failed')
    expect((await call('POST', path, { body: { task_id, state: 'processing' } })).body.state).toBe('failed')
  })

  test('the provider calls back over HTTP to the public URL', async () => {
    const served = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req, srv) => t.app.fetch(req, srv) })
    try {
      await setUp({ settings: { publicUrl: `http://127.0.0.1:${served.port}` } })
      const { task_id } = (await start()).body
      const res = await fake.callBack(0, { id: task_id, state: 'success', err_code: '', credits: 4, creations: [] })
      expect(res.status).toBe(200)
      expect((await t.deps.db.selectFrom('video_tasks').select('state').executeTakeFirstOrThrow()).state).toBe('success')
      // The access log keeps the path only: the secret in the query is not logged.
      expect(t.logs.filter((l) => l.includes('/proxy/provider/callback')).join()).not.toContain('secret')
    } finally {
      await served.stop(true)
    }
  })
})
