/**
 * The setting of the video proxy's HTTP tests: a Vidu-compatible provider on 127.0.0.1 for the whole file, and
 * per test a fresh app pointed at it with user "alice". After each test, no reply, log line or stored row holds
 * the provider key. Call useVideoSuite() at the top of a test file; the bindings below follow each test.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'bun:test'
import { addUser, makeTestApp, type TestApp } from './app'
import { nodeStartBody } from './video-node'
import { startFakeProvider, useProvider, type FakeProvider } from './video-provider'

export const START = '/proxy/vidu/start-end2video'
export const IMAGES = ['https://images.example/start.png', 'https://images.example/end.png']

export let fake: FakeProvider
export let t: TestApp
/** Alice's access token. */
export let alice: string
let replies: string[] = []
/** Every app a test made (a test may set up again with other settings): each is cleaned up after the test. */
let made: TestApp[] = []

/** A fresh app (with these overrides) pointed at the provider, and alice. */
export async function setUp(overrides: Parameters<typeof makeTestApp>[0] = {}) {
  t = await makeTestApp(overrides)
  made.push(t)
  useProvider(t, fake)
  alice = await addUser(t, 'alice')
}

export function useVideoSuite() {
  beforeAll(async () => (fake = await startFakeProvider()))
  afterAll(() => fake.stop())
  beforeEach(async () => {
    fake.reset()
    replies = []
    await setUp()
  })
  afterEach(async () => {
    const apps = made
    made = []
    try {
      // The key never reaches a caller, a log line or a stored row, in any app the test made.
      expect(replies.join('\n')).not.toContain(fake.key)
      for (const app of apps) {
        const rows = await Promise.all(
          ['video_tasks', 'staged_images', 'audit_log'].map((table) =>
            app.deps.db
              .selectFrom(table as 'video_tasks')
              .selectAll()
              .execute(),
          ),
        )
        expect(app.logs.join('\n')).not.toContain(fake.key)
        expect(JSON.stringify(rows)).not.toContain(fake.key)
      }
    } finally {
      for (const app of apps) await app.cleanup()
    }
  })
}

/** t.call, keeping every reply (status, headers, body) for the key scan. */
export async function call(method: string, path: string, opts: Parameters<TestApp['call']>[2] = {}) {
  const res = await t.call(method, path, opts)
  replies.push(JSON.stringify({ status: res.status, headers: [...res.headers], body: res.body }))
  return res
}

/** A start as the node sends it, by alice through X-API-KEY unless told otherwise. */
export const start = (body: unknown = nodeStartBody(IMAGES), headers: Record<string, string> = { 'x-api-key': alice }) =>
  call('POST', START, { body, headers })
