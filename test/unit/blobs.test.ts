import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('blobs')
const tmp = dirs.make
afterEach(dirs.cleanup)

const sha = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex')

describe('createDiskBlobStore', () => {
  test('stages, commits, then serves the bytes by SHA-256 with ranges', async () => {
    const blobs = createDiskBlobStore(tmp())
    const staged = await blobs.stage(new Blob(['hello world']).stream(), 100)
    expect(staged.sha256).toBe(sha('hello world'))
    expect(staged.size).toBe(11)
    expect(await blobs.open(staged.sha256)).toBeUndefined() // not visible before commit
    await staged.commit()
    const blob = (await blobs.open(staged.sha256))!
    expect(blob.size).toBe(11)
    expect(await blob.slice(6, 11).text()).toBe('world')
    expect(await blobs.open('0'.repeat(64))).toBeUndefined()
    expect(await blobs.open('../../etc/passwd')).toBeUndefined()
    const listed: string[] = []
    for await (const s of blobs.list()) listed.push(s)
    expect(listed).toEqual([staged.sha256])
    await blobs.delete(staged.sha256)
    expect(await blobs.open(staged.sha256)).toBeUndefined()
  })

  test('a discarded stage leaves nothing behind', async () => {
    const dir = tmp()
    const blobs = createDiskBlobStore(dir)
    const staged = await blobs.stage(new Blob(['x']).stream(), 100)
    await staged.discard()
    expect([...new Bun.Glob('**/*').scanSync(dir)]).toEqual([])
  })

  test('refuses bytes past the limit and leaves nothing behind', async () => {
    const dir = tmp()
    const blobs = createDiskBlobStore(dir)
    await expect(blobs.stage(new Blob(['x'.repeat(101)]).stream(), 100)).rejects.toMatchObject({ status: 413 })
    expect([...new Bun.Glob('**/*').scanSync(dir)]).toEqual([])
  })

  test('sweeps staging leftovers older than the given age, and only those', async () => {
    const dir = tmp()
    mkdirSync(join(dir, 'tmp'))
    const stale = join(dir, 'tmp', 'old.part')
    const fresh = join(dir, 'tmp', 'new.part')
    writeFileSync(stale, 'x')
    writeFileSync(fresh, 'x')
    const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000
    utimesSync(stale, twoHoursAgo, twoHoursAgo)
    expect(await createDiskBlobStore(dir).sweep(3600_000)).toBe(1)
    expect(existsSync(stale)).toBe(false)
    expect(existsSync(fresh)).toBe(true)
  })

  test('sweeps at once the leftovers of a process that has ended, never those of a live one', async () => {
    const dir = tmp()
    mkdirSync(join(dir, 'tmp'))
    const ended = Bun.spawnSync(['true']).pid
    const dead = join(dir, 'tmp', `${ended}-a.part`)
    const live = join(dir, 'tmp', `${process.pid}-b.part`)
    const parent = join(dir, 'tmp', `${process.ppid}-c.part`)
    for (const f of [dead, live, parent]) writeFileSync(f, 'x')
    expect(await createDiskBlobStore(dir).sweep(3600_000)).toBe(1)
    expect([existsSync(dead), existsSync(live), existsSync(parent)]).toEqual([false, true, true])
  })

  test('sweeps the write probes of a process killed mid-check, as it sweeps staging files', async () => {
    const dir = tmp()
    const blobs = createDiskBlobStore(dir)
    expect(await blobs.check()).toBe(true)
    expect([...new Bun.Glob('tmp/*').scanSync(dir)]).toEqual([]) // a check that ends removes its probe
    const ended = Bun.spawnSync(['true']).pid
    const dead = join(dir, 'tmp', `${ended}-a.probe`)
    const live = join(dir, 'tmp', `${process.pid}-b.probe`)
    const old = join(dir, 'tmp', 'c.probe') // from a release that named probes without the process
    for (const f of [dead, live, old]) writeFileSync(f, 'ok')
    const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000
    utimesSync(old, twoHoursAgo, twoHoursAgo)
    expect(await blobs.sweep(3600_000)).toBe(2)
    expect([existsSync(dead), existsSync(live), existsSync(old)]).toEqual([false, true, false])
  })

  test("sweeps at once the leftovers of an earlier process with this one's pid (a container's pid 1), never its own", async () => {
    const dir = tmp()
    const blobs = createDiskBlobStore(dir)
    const staged = await blobs.stage(new Blob(['in flight']).stream(), 100)
    const earlier = join(dir, 'tmp', `${process.pid}-p0badf00d-a.part`)
    writeFileSync(earlier, 'x')
    expect(await blobs.sweep(3600_000)).toBe(1)
    expect([existsSync(earlier), existsSync(staged.localPath)]).toEqual([false, true])
  })

  test('directories are 0700 and stored files 0600', async () => {
    const dir = tmp()
    const blobs = createDiskBlobStore(dir)
    const staged = await blobs.stage(new Blob(['secret']).stream(), 100)
    expect(statSync(staged.localPath).mode & 0o777).toBe(0o600)
    await staged.commit()
    expect(statSync(join(dir, 'blobs')).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'blobs', staged.sha256.slice(0, 2))).mode & 0o777).toBe(0o700)
  })
})
