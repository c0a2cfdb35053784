import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Inspection } from '../../src/archive/check'
import { DEFAULT_ARCHIVE_LIMITS } from '../../src/archive/entries'
import { inspectArchive } from '../../src/archive/inspect'
import { InspectionPool } from '../../src/archive/worker-pool'
import { makeZip, samplePack } from '../support/archives'
import { hostileCorpus } from '../support/hostile-archives'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('pool')
afterAll(() => dirs.cleanup())

/** A stand-in worker that answers by the path it is sent: it loops forever, throws, exits, or answers after a delay. */
const scriptedWorker = new URL(
  URL.createObjectURL(
    new Blob([
      `self.onmessage = (e) => {
        const { id, path } = e.data
        if (path === 'loop') for (;;) {}
        if (path === 'throw') throw new Error('boom')
        if (path === 'exit') process.exit(3)
        setTimeout(() => self.postMessage({ id, inspection: { ok: true, format: 'zip', hostNodes: [path] } }), Number(path) || 0)
      }
      self.postMessage({ ready: true })`,
    ]),
  ),
)
const realWorker = new URL('../../src/archive/inspect-worker.ts', import.meta.url)
const pool = (workerUrl: URL, size = 1, idleMs = 60_000) => new InspectionPool({ workerUrl, size, graceMs: 0, idleMs })
/** Time budgets: the parent's clock starts when the job is handed over, worker start-up included. */
const hurried = { ...DEFAULT_ARCHIVE_LIMITS, timeBudgetMs: 100 }
const patient = { ...DEFAULT_ARCHIVE_LIMITS, timeBudgetMs: 10_000 }
const answered = (path: string): Inspection => ({ ok: true, format: 'zip', hostNodes: [path] })

describe('the inspection pool', () => {
  test('a worker that overruns its time is terminated, its job answered with the reason, and replaced', async () => {
    const p = pool(scriptedWorker)
    expect(await p.run('loop', hurried)).toEqual({ ok: false, format: undefined, reason: 'archive inspection ran out of time (0.1 s)' })
    expect(await p.run('after', patient)).toEqual(answered('after'))
    expect(p.started).toBe(2)
  })

  test('a worker that crashes or exits answers its job as a failed inspection and is replaced', async () => {
    const p = pool(scriptedWorker)
    expect(await p.run('throw', patient)).toEqual({ ok: false, format: undefined, reason: 'archive inspection failed: its worker crashed' })
    expect(await p.run('exit', patient)).toEqual({ ok: false, format: undefined, reason: 'archive inspection failed: its worker stopped' })
    expect(await p.run('after', patient)).toEqual(answered('after'))
    expect(p.started).toBe(3)
  })

  test('at most `size` checks run at once, the others wait their turn, and workers are reused', async () => {
    const p = pool(scriptedWorker, 2)
    let most = 0
    const watch = setInterval(() => (most = Math.max(most, p.load.running)), 1)
    const jobs = ['30', '30', '30', '30', '30'].map((path) => p.run(path, patient))
    expect(p.load).toEqual({ queued: 3, running: 2 })
    expect(await Promise.all(jobs)).toEqual(jobs.map(() => answered('30')))
    clearInterval(watch)
    expect(most).toBe(2)
    expect(p.started).toBe(2)
  })

  test('an idle worker is stopped and a new one started when work comes again', async () => {
    const p = pool(scriptedWorker, 1, 10)
    await p.run('first', patient)
    await Bun.sleep(50)
    expect(p.load).toEqual({ queued: 0, running: 0 })
    expect(await p.run('second', patient)).toEqual(answered('second'))
    expect(p.started).toBe(2)
  })

  test('the real worker stops itself when its time runs out, and stays in service', async () => {
    const p = new InspectionPool({ workerUrl: realWorker, size: 1, graceMs: 10_000, idleMs: 60_000 })
    const slow = hostileCorpus().find((c) => c.name.startsWith('gzip bomb'))!
    const path = join(dirs.make(), 'slow.tar.gz')
    await Bun.write(path, slow.bytes())
    expect(await p.run(path, { ...DEFAULT_ARCHIVE_LIMITS, timeBudgetMs: 10 })).toMatchObject({
      ok: false,
      reason: 'archive inspection ran out of time (0.01 s)',
    })
    expect(p.started).toBe(1)
  })

  test('the byte budget refuses an archive that would read or inflate more', async () => {
    const path = join(dirs.make(), 'pack.zip')
    await Bun.write(path, makeZip(samplePack([{ name: 'big.py', data: 'x = 1\n'.repeat(10_000) }])))
    expect(await inspectArchive(path, { ...DEFAULT_ARCHIVE_LIMITS, byteBudget: 20_000 })).toMatchObject({
      ok: false,
      reason: 'archive inspection ran out of its byte budget (20000 bytes read and decompressed)',
    })
    expect((await inspectArchive(path, DEFAULT_ARCHIVE_LIMITS)).ok).toBe(true)
  })

  test('a worker that cannot load fails the job loudly instead of flagging the archive', async () => {
    const broken = new URL(URL.createObjectURL(new Blob(['throw new Error("missing module")'])))
    await expect(pool(broken).run('any', patient)).rejects.toThrow('the archive inspection worker did not start')
  })

  test('a file that cannot be read is a fault of the check, not a verdict on the archive', async () => {
    await expect(inspectArchive(join(dirs.make(), 'missing.zip'), DEFAULT_ARCHIVE_LIMITS)).rejects.toThrow()
  })
})
