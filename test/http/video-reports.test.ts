/**
 * What the provider reports about a task once it is started: credit counts past the stored column's range (the
 * task is started and paid, so never a 500, on either backend), and a finished task's stored record is final.
 */
import { describe, expect, test } from 'bun:test'
import { findVideoTaskByTaskId, updateVideoTask } from '../../src/store/video'
import { nestedJson } from '../support/nested-json'
import { alice, call, fake, start, t, useVideoSuite } from '../support/video-suite'

useVideoSuite()

/** The stored column is a 32-bit integer on PostgreSQL. */
const MAX = 2_147_483_647

const stored = async () =>
  await t.deps.db.selectFrom('video_tasks').select(['task_id', 'state', 'err_code', 'credits']).executeTakeFirstOrThrow()
const callbackPath = (n = 0) => {
  const url = new URL(fake.starts[n]!.body.callback_url as string)
  return `${url.pathname}${url.search}`
}
const poll = (taskId: string) => call('GET', `/proxy/vidu/tasks/${taskId}/creations`, { token: alice })

describe('a hostile report', () => {
  test('nested 60,000 levels deep: 400 at once, the task as it was', async () => {
    const { task_id } = (await start()).body
    const res = await call('POST', callbackPath(), { body: `{"id":"${task_id}","state":"success","extra":${nestedJson(60_000)}}` })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('nests deeper than')
    expect(await stored()).toMatchObject({ task_id, state: 'created' })
  })
})

describe('credits past the stored range', () => {
  test('a start the provider says cost 3000000000 is recorded and answered with the largest count the store keeps', async () => {
    fake.onStart = { reply: { task_id: 'big1', state: 'created', credits: 3_000_000_000 } }
    const res = await start()
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ task_id: 'big1', state: 'created', credits: MAX })
    expect(await stored()).toEqual({ task_id: 'big1', state: 'created', err_code: '', credits: MAX })
  })

  test('a start reply whose count, code or seed cannot be read is recorded all the same (the task is started and paid)', async () => {
    for (const [i, odd] of [{ credits: -3 }, { credits: 'lots' }, { code: 'E1' }, { seed: 1.5 }, { credits: null, seed: null }].entries()) {
      fake.onStart = { reply: { task_id: `odd${i}`, state: 'created', ...odd } }
      const res = await start()
      expect({ odd, status: res.status }).toEqual({ odd, status: 200 })
      expect(res.body).toMatchObject({ task_id: `odd${i}`, state: 'created', credits: 0 })
      expect(await findVideoTaskByTaskId(t.deps.db, `odd${i}`)).toMatchObject({ state: 'created', credits: 0 })
    }
  })

  test('callbacks and polls with huge counts (3000000000, 1e308, just past the range once rounded) are kept at that count', async () => {
    const { task_id } = (await start()).body
    for (const credits of [3_000_000_000, 1e308, MAX + 0.5]) {
      const res = await call('POST', callbackPath(), { body: { id: task_id, state: 'processing', credits, creations: [] } })
      expect(res).toMatchObject({ status: 200, body: { state: 'processing' } })
      expect((await stored()).credits).toBe(MAX)
      await call('POST', callbackPath(), { body: { id: task_id, state: 'processing', credits: 4, creations: [] } })
    }
    fake.onPoll = { reply: { state: 'processing', err_code: '', credits: 1e308, creations: [] } }
    const { body, status } = await poll(task_id)
    expect(status).toBe(200)
    expect(body.credits).toBe(MAX)
    expect((await stored()).credits).toBe(MAX)
  })
})

describe('a finished task is final', () => {
  test('callbacks after success change neither its state, its error code nor its credits; the reply says the stored state', async () => {
    const { task_id } = (await start()).body
    const path = callbackPath()
    const report = (body: Record<string, unknown>) => call('POST', path, { body: { id: task_id, creations: [], ...body } })
    expect((await report({ state: 'success', err_code: '', credits: 4 })).body.state).toBe('success')
    expect((await report({ state: 'failed', err_code: 'SomeErr', credits: 0 })).body.state).toBe('success')
    expect(await stored()).toMatchObject({ state: 'success', err_code: '', credits: 4 })
    expect(t.logs.filter((l) => l.includes('"video.task_callback"')).at(-1)).toContain('"state":"failed","stored":"success"')
    expect((await report({ state: 'success', err_code: '', credits: 0 })).body.state).toBe('success')
    expect((await report({ state: 'processing', credits: 9 })).body.state).toBe('success')
    expect(await stored()).toMatchObject({ state: 'success', err_code: '', credits: 4 })
  })

  test('a failed task stays failed with its first error code and credits, for callbacks and polls alike', async () => {
    const { task_id } = (await start()).body
    const path = callbackPath()
    await call('POST', path, { body: { id: task_id, state: 'failed', err_code: 'AuditSubmitIllegal', credits: 0, creations: [] } })
    await call('POST', path, { body: { id: task_id, state: 'failed', err_code: 'Other', credits: 7, creations: [] } })
    expect(await stored()).toMatchObject({ state: 'failed', err_code: 'AuditSubmitIllegal', credits: 0 })
    // A poll asks the provider live and answers what it says; the stored record stays as it was.
    fake.onPoll = { reply: { state: 'success', err_code: '', credits: 4, creations: [] } }
    const res = await poll(task_id)
    expect(res.body).toMatchObject({ state: 'success', credits: 4 })
    expect(await stored()).toMatchObject({ state: 'failed', err_code: 'AuditSubmitIllegal', credits: 0 })
  })

  test('the store refuses to rewrite a finished row, so two reports read before either was written cannot undo each other', async () => {
    const { task_id } = (await start()).body
    const row = (await findVideoTaskByTaskId(t.deps.db, task_id))!
    await updateVideoTask(t.deps.db, row.id, { state: 'success', err_code: '', credits: 4 }, t.clock.now.toISOString())
    await updateVideoTask(t.deps.db, row.id, { state: 'failed', err_code: 'SomeErr', credits: 0 }, t.clock.now.toISOString())
    expect(await stored()).toMatchObject({ state: 'success', err_code: '', credits: 4 })
  })
})
