/**
 * Starting a video task through the proxy: the request the provider gets, what is stored and answered, who may
 * start, and validation (every problem one line; nothing reaches the provider).
 */
import { describe, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { addUser, PUBLIC_URL } from '../support/app'
import { assertNodeAccepts, nodeStartBody } from '../support/video-node'
import { JPEG_HEAD, PNG, pngDataUri } from '../support/video-provider'
import { alice, call, fake, IMAGES, setUp, start, START, t, useVideoSuite } from '../support/video-suite'

useVideoSuite()

describe('starting a task', () => {
  test("the node's request reaches the provider with the key, and the reply carries what the node requires", async () => {
    const res = await start({ ...nodeStartBody(IMAGES), unknown_field: 'dropped', payload: 'x' })
    expect(res.status).toBe(200)
    assertNodeAccepts('TaskCreationResponse', res.body)
    expect(res.body).toEqual({
      task_id: '817240034923800000',
      state: 'created',
      credits: 4,
      created_at: '2026-01-02T03:04:06.000Z',
      ...nodeStartBody(IMAGES),
      seed: 1234567, // the provider's choice for 0 ("random")
    })
    expect(fake.starts).toHaveLength(1)
    const sent = fake.starts[0]!
    expect(sent.authorization).toBe(`Token ${fake.key}`)
    const { callback_url, ...forwarded } = sent.body
    expect(forwarded).toEqual(nodeStartBody(IMAGES))
    expect(callback_url).toMatch(new RegExp(`^${PUBLIC_URL}/proxy/provider/callback\\?task=[0-9a-f-]{36}&secret=[\\w-]{43}$`))
  })

  test.each([
    ['in its own zone', '2026-11-23T14:30:00+08:00', '2026-11-23T06:30:00.000Z'],
    ['with microseconds', '2026-11-23T06:30:00.123456Z', '2026-11-23T06:30:00.123Z'],
    ['without a zone (taken as UTC)', '2026-11-23T06:30:00', '2026-11-23T06:30:00.000Z'],
    ['as a date', '2026-11-23', '2026-11-23T00:00:00.000Z'],
    ['as text that is no time', 'yesterday', undefined],
    ['as a number', 1795415400, undefined],
    ['as an object', { at: 'noon' }, undefined],
    ['as an empty string', '', undefined],
    ['not at all', undefined, undefined],
  ])(
    'a provider time %s comes back as RFC 3339 UTC with milliseconds, else as our now (the task was started and paid)',
    async (_, sent, expected) => {
      fake.createdAt = sent
      const res = await start(nodeStartBody(IMAGES))
      expect(res.status).toBe(200)
      expect(res.body.created_at).toBe(expected ?? t.clock.now.toISOString())
      assertNodeAccepts('TaskCreationResponse', res.body)
    },
  )

  test('the task is stored with its caller, state and credits, and a summary of the request without image data or queries', async () => {
    const images = [`${PUBLIC_URL}/customers/storage/abc?expires=1&signature=ff`, pngDataUri()]
    const res = await start({ ...nodeStartBody(images), prompt: 'kept' })
    expect(res.status).toBe(200)
    const row = await t.deps.db.selectFrom('video_tasks').selectAll().executeTakeFirstOrThrow()
    expect(row).toMatchObject({ task_id: res.body.task_id, caller: 'user:alice', state: 'created', credits: 4, err_code: '' })
    expect(row.callback_secret_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.parse(row.request_json)).toEqual({
      ...nodeStartBody([]),
      prompt: 'kept',
      images: [`${PUBLIC_URL}/customers/storage/abc`, `data:image/png;base64 (${pngDataUri().length - 22} characters)`],
    })
    expect(t.logs.some((l) => l.includes('"video.task_started"') && l.includes('"caller":"alice"'))).toBe(true)
  })

  test('a task started but not recorded (the store refused the row) is logged with its id for the operator', async () => {
    // Away while the task starts (on every backend: a table renamed is one the insert cannot find), back for the checks.
    await sql`alter table video_tasks rename to video_tasks_away`.execute(t.deps.db)
    const res = await start(nodeStartBody(IMAGES))
    await sql`alter table video_tasks_away rename to video_tasks`.execute(t.deps.db)
    expect(res.status).toBe(500)
    expect(fake.starts).toHaveLength(1)
    const line = t.logs.find((l) => l.includes('"video.task_unrecorded"'))
    expect(line).toMatch(/"task":"8172400349238\d{5}"/)
    expect(line).toContain('"caller":"alice"')
    expect(line).toContain('"credits":4')
    expect(line).toContain('video_tasks')
  })

  test('a bearer token works like X-API-KEY, and /proxy/provider like /proxy/vidu', async () => {
    const res = await call('POST', '/proxy/provider/start-end2video', { token: alice, body: nodeStartBody(IMAGES) })
    expect(res.status).toBe(200)
    expect(fake.starts).toHaveLength(1)
  })

  test("a caller's own https callback_url is forwarded instead of ours", async () => {
    const res = await start({ ...nodeStartBody(IMAGES), callback_url: 'https://hooks.example/vidu?sig=1' })
    expect(res.status).toBe(200)
    expect(fake.starts[0]!.body.callback_url).toBe('https://hooks.example/vidu?sig=1')
    expect(res.body.callback_url).toBe('https://hooks.example/vidu?sig=1')
    expect(
      (await t.deps.db.selectFrom('video_tasks').select('callback_secret_hash').executeTakeFirstOrThrow()).callback_secret_hash,
    ).toBeNull()
  })

  test("the upstream's other video paths, not served here, answer 404 with the proxy body", async () => {
    const res = await call('POST', '/proxy/vidu/text2video', { body: nodeStartBody([]) })
    expect(res).toMatchObject({ status: 404, body: { message: 'No route for POST /proxy/vidu/text2video', details: [] } })
    expect((await call('GET', '/nodes/x/y/z')).body.error).toBe('not_found')
  })

  test('without a provider: 503 with the proxy body, before asking who calls', async () => {
    t.deps.video.provider = undefined
    for (const res of [
      await start(nodeStartBody(IMAGES), {}),
      await call('GET', '/proxy/vidu/tasks/1/creations', { token: alice }),
      await call('POST', '/customers/storage', { token: alice, body: { file_name: 'a.png' } }),
    ]) {
      expect(res.status).toBe(503)
      expect(res.body).toEqual({
        message: 'The video provider is not configured on this registry (the operator sets --video-provider-url)',
        details: [],
      })
    }
  })
})

describe('who may start', () => {
  test('no credential, a malformed one, an unknown token, a banned user: refused with the proxy body', async () => {
    const banned = await addUser(t, 'bob')
    await t.deps.db.updateTable('users').set({ status: 'banned' }).where('id', '=', 'bob').execute()
    const cases: [Record<string, string>, number, string][] = [
      [{}, 401, 'Authentication required: send Authorization: Bearer <token> or X-API-KEY: <token> with an access token'],
      [{ authorization: 'Basic abc' }, 401, 'token is not in Bearer format'],
      [{ authorization: 'Bearer nope' }, 401, 'invalid auth token'],
      [{ 'x-api-key': 'comfyui-0123456789' }, 401, 'invalid auth token'],
      [{ 'x-api-key': banned }, 403, 'user/publisher is banned'],
    ]
    for (const [headers, status, message] of cases) {
      const res = await start(nodeStartBody(IMAGES), headers)
      expect({ status: res.status, body: res.body }).toEqual({ status, body: { message, details: [] } })
    }
    expect(fake.starts).toHaveLength(0)
  })

  test('--video-public: no credential and a foreign key both start, keyed by client address; a banned user still cannot', async () => {
    await setUp({ settings: { video: { public: true, maxImageBytes: 1 << 20 } } })
    expect((await start(nodeStartBody(IMAGES), {})).status).toBe(200)
    expect((await start(nodeStartBody(IMAGES), { 'x-api-key': 'comfyui-foreign' })).status).toBe(200)
    const rows = await t.deps.db.selectFrom('video_tasks').select('caller').execute()
    expect(rows.map((r) => r.caller)).toEqual(['addr:unknown', 'addr:unknown'])
  })
})

describe('validation: every problem one line, and nothing reaches the provider', () => {
  const long = 'x'.repeat(1501)
  const cases: [string, Record<string, unknown>, string][] = [
    ['images missing', { images: undefined }, 'body.images: is required'],
    ['one image', { images: [IMAGES[0]] }, 'body.images: must hold exactly 2 images: the start frame and the end frame'],
    ['three images', { images: [...IMAGES, IMAGES[0]] }, 'body.images: must hold exactly 2 images: the start frame and the end frame'],
    [
      'a file: URL',
      { images: ['file:///etc/passwd', IMAGES[1]] },
      'body.images.0: must be an https:// or http:// URL, or a data:image/png|jpeg|webp;base64, URI',
    ],
    [
      'an ftp: URL',
      { images: [IMAGES[0], 'ftp://x/y.png'] },
      'body.images.1: must be an https:// or http:// URL, or a data:image/png|jpeg|webp;base64, URI',
    ],
    [
      'a relative URL',
      { images: ['/etc/passwd', IMAGES[1]] },
      'body.images.0: must be an https:// or http:// URL, or a data:image/png|jpeg|webp;base64, URI',
    ],
    [
      'a non-image data: URI',
      { images: ['data:text/html;base64,PGgxPg==', IMAGES[1]] },
      'body.images.0: a data: URI must be data:image/png, data:image/jpeg or data:image/webp with ;base64,',
    ],
    ['broken base64', { images: ['data:image/png;base64,iVBO$$$$', IMAGES[1]] }, 'body.images.0: the data: URI does not hold valid base64'],
    [
      'a JPEG labelled PNG',
      { images: [`data:image/png;base64,${Buffer.from(JPEG_HEAD).toString('base64')}`, IMAGES[1]] },
      "body.images.0: the data: URI's bytes are not a image/png image",
    ],
    ['a number for an image', { images: [5, IMAGES[1]] }, 'body.images.0: must be a string: an image URL or a data: URI'],
    ['a long prompt', { prompt: long }, 'body.prompt: must be at most 1500 characters'],
    ['a huge prompt', { prompt: '🎬'.repeat(100_000) }, 'body.prompt: must be at most 1500 characters'],
    ['duration 0', { duration: 0 }, 'body.duration: must be at least 1 second'],
    ['duration 2.5', { duration: 2.5 }, 'body.duration: must be a whole number of seconds'],
    ['duration as text', { duration: '5' }, 'body.duration: must be a whole number of seconds'],
    ['seed -1', { seed: -1 }, 'body.seed: must be a whole number from 0 to 2147483647'],
    ['seed 2^31', { seed: 2147483648 }, 'body.seed: must be a whole number from 0 to 2147483647'],
    ['aspect ratio 4:3', { aspect_ratio: '4:3' }, 'body.aspect_ratio: must be one of 16:9, 9:16, 1:1'],
    ['resolution 4k', { resolution: '4k' }, 'body.resolution: must be one of 360p, 540p, 720p, 1080p'],
    ['movement huge', { movement_amplitude: 'huge' }, 'body.movement_amplitude: must be one of auto, small, medium, large'],
    ['style cartoon', { style: 'cartoon' }, 'body.style: must be one of general, anime'],
    ['an http callback', { callback_url: 'http://hooks.example/x' }, 'body.callback_url: must be an https:// URL'],
    ['priority 1.5', { priority: 1.5 }, 'body.priority: must be a whole number'],
    ['enhance as text', { enhance: 'yes' }, 'body.enhance: must be true or false'],
    ['an empty model', { model: '  ' }, 'body.model: must not be empty'],
    ['no model', { model: undefined }, 'body.model: is required'],
  ]
  for (const [name, change, line] of cases) {
    test(`${name}: 400`, async () => {
      const res = await start({ ...nodeStartBody(IMAGES), ...change })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ message: line, details: [line] })
      expect(fake.starts).toHaveLength(0)
    })
  }

  test('several problems: one line each, in field order', async () => {
    const res = await start({ model: '', images: ['file:///x'], seed: -5, style: 'noir', enhance: 1 })
    expect(res.status).toBe(400)
    expect(res.body.details).toEqual([
      'body.model: must not be empty',
      'body.images.0: must be an https:// or http:// URL, or a data:image/png|jpeg|webp;base64, URI',
      'body.images: must hold exactly 2 images: the start frame and the end frame',
      'body.seed: must be a whole number from 0 to 2147483647',
      'body.style: must be one of general, anime',
      'body.enhance: must be true or false',
    ])
    expect(fake.starts).toHaveLength(0)
  })

  test('the prompt limit counts characters, not UTF-16 units; null means not sent', async () => {
    const res = await start({ ...nodeStartBody(IMAGES), prompt: '🎬'.repeat(1500), style: null, seed: null })
    expect(res.status).toBe(200)
    expect(fake.starts[0]!.body).not.toHaveProperty('style')
  })

  test('data: URIs are accepted up to the decoded size limit, and refused past it', async () => {
    await setUp({ settings: { video: { public: false, maxImageBytes: 1024 } } })
    const fits = Uint8Array.from([...PNG, ...new Uint8Array(1024 - PNG.length)])
    const over = Uint8Array.from([...fits, 0])
    expect((await start(nodeStartBody([pngDataUri(fits), pngDataUri()]))).status).toBe(200)
    const res = await start(nodeStartBody([pngDataUri(over), pngDataUri()]))
    expect(res.body.details).toEqual(['body.images.0: the image is 1025 bytes; the limit is 1024'])
    expect(fake.starts).toHaveLength(1)
  })

  test('malformed JSON and an oversized body: 400 and 413 with the proxy body', async () => {
    const bad = await call('POST', START, { headers: { 'x-api-key': alice }, body: '{"images": [' })
    expect(bad).toMatchObject({ status: 400, body: { message: 'body: malformed JSON', details: ['body: malformed JSON'] } })
    const list = await call('POST', START, { headers: { 'x-api-key': alice }, body: JSON.stringify([nodeStartBody(IMAGES)]) })
    expect(list).toMatchObject({ status: 400, body: { message: 'body: must be a JSON object', details: ['body: must be a JSON object'] } })
    await setUp({ settings: { video: { public: false, maxImageBytes: 1024 } } })
    const huge = await start({ ...nodeStartBody(IMAGES), prompt: 'x'.repeat(300_000) })
    expect(huge.status).toBe(413)
    expect(huge.body).toEqual({ message: expect.stringContaining('request bodies are limited to'), details: [] })
    expect(fake.starts).toHaveLength(0)
  })
})
