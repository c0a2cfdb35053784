/** A sync killed at any point (SIGKILL, mid-run) is finished by the next run: no duplicate or missing rows, no partial files. */
import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { join, resolve } from 'node:path'
import { fakeNodes, startPublicUpstream, type PublicUpstream } from '../support/public-upstream'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('resume')
let upstream: PublicUpstream
afterEach(() => {
  upstream?.stop()
  dirs.cleanup()
})

const MAIN = resolve(import.meta.dir, '../../src/main.ts')

/** Runs `sync` in its own process; `killAt` kills it with SIGKILL when the upstream receives a matching request. */
async function runSync(dir: string, killAt?: { match: RegExp; nth: number }) {
  let seen = 0
  const proc = Bun.spawn([process.execPath, MAIN, 'sync', '--from', upstream.url, '--archives', '--data', dir, '--concurrency', '2'], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  upstream.onRequest = (path) => {
    if (killAt && killAt.match.test(path) && ++seen === killAt.nth) proc.kill('SIGKILL')
  }
  const code = await proc.exited
  upstream.onRequest = undefined
  return { code, signal: proc.signalCode, out: await new Response(proc.stdout).text(), err: await new Response(proc.stderr).text() }
}

describe('a sync killed mid-run', () => {
  test('killed while reading versions, then while fetching archives: the next run completes the mirror exactly', async () => {
    upstream = startPublicUpstream(fakeNodes(30))
    const dir = dirs.make()
    const first = await runSync(dir, { match: /\/versions\?/, nth: 12 })
    expect(first.signal).toBe('SIGKILL')
    const second = await runSync(dir, { match: /^\/storage\//, nth: 25 })
    expect(second.signal).toBe('SIGKILL')
    const last = await runSync(dir)
    expect({ code: last.code, err: last.err }).toEqual({ code: 0, err: '' })
    expect(last.out).toMatch(/^sync from http:\/\/127\.0\.0\.1:\d+: complete/)

    const db = new Database(join(dir, 'registry.db'), { readonly: true })
    const count = (sql: string) => (db.query(sql).get() as { n: number }).n
    expect(count('select count(*) as n from nodes')).toBe(30)
    expect(count('select count(*) as n from node_versions')).toBe(60)
    expect(count("select count(*) as n from node_versions where status = 'active'")).toBe(60)
    expect(count('select count(*) as n from archives')).toBe(60)
    expect(count("select count(*) as n from mirror_archives where sha256 is null or problem != ''")).toBe(0)
    const shas = (db.query('select sha256 from archives order by sha256').all() as { sha256: string }[]).map((r) => r.sha256)
    db.close()
    // Every archive file is referenced by a row, each row's file is there, and nothing partial is left.
    const files = [...new Bun.Glob('**/*').scanSync({ cwd: dir, onlyFiles: true })]
    expect(files.filter((f) => f.startsWith('tmp/'))).toEqual([])
    expect(
      files
        .filter((f) => f.startsWith('blobs/'))
        .map((f) => f.split('/').pop())
        .sort(),
    ).toEqual(shas)
    // And a run right after changes nothing.
    const again = await runSync(dir)
    expect(again.out).toContain('0 publishers, 0 nodes, 0 versions changed, 0 removed; archives 0 stored (0 B fetched)')
  }, 60_000)
})
