/**
 * The host application's video node against the compiled executable, over real HTTP on 127.0.0.1, with a
 * Vidu-compatible provider started here: stage two images, PUT their bytes, start the task, poll until success,
 * fetch the video. The provider key is read from a file, so it is in no process listing and no log line.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { POLL_REUSE_MS } from '../../src/services/video-polls'
import { BIN, ensureBinary, spawnServe } from '../support/binary'
import { backendEnv } from '../support/backends'
import { assertNodeAccepts, nodeStartBody } from '../support/video-node'
import { PNG, startFakeProvider, VIDEO_BYTES, type FakeProvider } from '../support/video-provider'

const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-video-'))
const data = join(dir, 'data')
let provider: FakeProvider

beforeAll(async () => {
  provider = await startFakeProvider()
  await ensureBinary()
})
afterAll(async () => {
  await provider.stop()
  rmSync(dir, { recursive: true, force: true })
})

const startServer = (args: string[]) => spawnServe(['--port', '0', '--host', '127.0.0.1', '--data', data, ...args], backendEnv(data))

// The node's own headers: Accept: any type, its key in X-API-KEY, JSON bodies.
const nodeHeaders = (key: string) => ({ accept: '*/*', 'x-api-key': key, 'content-type': 'application/json' })
const read = (res: Response): Promise<any> => res.json()

describe('the video node against the compiled executable', () => {
  test('stage two images, start, poll until success, fetch the video', async () => {
    const created = Bun.spawnSync(
      [BIN, 'users', 'create', '--id', 'vera', '--email', 'vera@example.com', '--name', 'Vera', '--data', data],
      { env: { ...process.env, ...backendEnv(data) } },
    )
    expect(created.exitCode).toBe(0)
    const apiKey = created.stdout.toString().trim()
    const keyFile = join(dir, 'vidu.key')
    writeFileSync(keyFile, `${provider.key}\n`, { mode: 0o600 })
    const server = await startServer(['--video-provider-url', provider.url, '--video-provider-key-file', keyFile])
    try {
      expect(readFileSync(`/proc/${server.proc.pid}/cmdline`, 'utf8')).not.toContain(provider.key)

      // Staging: POST /customers/storage for each frame, then PUT the PNG bytes to upload_url without credentials.
      const frames = [PNG, Uint8Array.from([...PNG, 0x00])]
      const downloads: string[] = []
      for (const frame of frames) {
        const staged = await fetch(`${server.url}/customers/storage`, {
          method: 'POST',
          headers: nodeHeaders(apiKey),
          body: JSON.stringify({ file_name: 'image.png', content_type: 'image/png' }),
        })
        expect(staged.status).toBe(200)
        const urls = await read(staged)
        assertNodeAccepts('UploadResponse', urls)
        const put = await fetch(urls.upload_url, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: frame })
        expect(put.status).toBeLessThan(400)
        downloads.push(urls.download_url)
      }

      // The task: the provider fetches both frames from the download URLs while starting it.
      provider.fetchImages = true
      const started = await fetch(`${server.url}/proxy/vidu/start-end2video`, {
        method: 'POST',
        headers: nodeHeaders(apiKey),
        body: JSON.stringify(nodeStartBody(downloads)),
      })
      expect(started.status).toBe(200)
      const task = await read(started)
      assertNodeAccepts('TaskCreationResponse', task)
      expect(task.state).not.toBe('failed')
      expect(provider.starts.at(-1)!.authorization).toBe(`Token ${provider.key}`)
      expect(provider.starts.at(-1)!.fetched.map((f) => [f.status, f.type, f.bytes])).toEqual(frames.map((f) => [200, 'image/png', f]))

      // Polling, as the node does, until a terminal state (the fake provider reports processing, then success). The
      // node waits 5 s between polls; here the window in which polls of a task share the provider's answer.
      let status: any
      for (let i = 0; i < 10 && status?.state !== 'success'; i++) {
        if (i > 0) await Bun.sleep(POLL_REUSE_MS)
        const res = await fetch(`${server.url}/proxy/vidu/tasks/${task.task_id}/creations`, {
          headers: { accept: '*/*', 'x-api-key': apiKey },
        })
        expect(res.status).toBe(200)
        status = await read(res)
        assertNodeAccepts('TaskStatusResponse', status)
        expect(status.state).not.toBe('failed')
      }
      expect(status.state).toBe('success')
      const video = await fetch(status.creations[0].url)
      expect(new Uint8Array(await video.arrayBuffer())).toEqual(VIDEO_BYTES)

      // The provider's callback reaches the task through the public URL, with the task's secret.
      expect((await provider.callBack(provider.starts.length - 1, { id: task.task_id, state: 'success', creations: [] })).status).toBe(200)

      // Another user's poll is a 404, an anonymous one a 401, both with the proxy body.
      const other = Bun.spawnSync(
        [BIN, 'users', 'create', '--id', 'otto', '--email', 'otto@example.com', '--name', 'Otto', '--data', data],
        { env: { ...process.env, ...backendEnv(data) } },
      )
      const poll = (headers: Record<string, string>) => fetch(`${server.url}/proxy/vidu/tasks/${task.task_id}/creations`, { headers })
      const stranger = await poll({ 'x-api-key': other.stdout.toString().trim() })
      expect([stranger.status, await read(stranger)]).toEqual([404, { message: 'task not found', details: [] }])
      const anonymous = await poll({})
      expect([anonymous.status, (await read(anonymous)).details]).toEqual([401, []])
    } finally {
      server.proc.kill('SIGTERM')
      expect(await server.proc.exited).toBe(0)
    }
    const log = await new Response(server.proc.stderr).text()
    expect(log).toContain('"video.task_started"')
    expect(log).not.toContain(provider.key)
  })

  test('without a provider the proxy answers 503, and settings naming a key without a URL stop it with exit 2', async () => {
    const server = await startServer([])
    try {
      const res = await fetch(`${server.url}/proxy/vidu/start-end2video`, { method: 'POST', body: '{}' })
      expect(res.status).toBe(503)
      expect((await read(res)).details).toEqual([])
    } finally {
      server.proc.kill('SIGTERM')
      await server.proc.exited
    }
    const bad = Bun.spawnSync([BIN, 'serve', '--port', '0', '--data', data], {
      env: { ...process.env, REGISTRY_MIRROR_VIDEO_PROVIDER_KEY: 'k-123' },
    })
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr.toString().trim()).toBe('REGISTRY_MIRROR_VIDEO_PROVIDER_KEY: a provider key without --video-provider-url is unused')
  })
})
