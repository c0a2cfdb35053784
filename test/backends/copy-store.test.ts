/**
 * `registry-mirror copy-store` moves a registry kept in a data directory onto PostgreSQL and a bucket: afterwards
 * an app on the new backends serves the same nodes, archives, tokens and feed, and goes on from there.
 */
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { runCli } from '../../src/cli'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { openStore } from '../../src/store/db'
import { feedPosition } from '../../src/store/changes'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publish, publishActive, type TestApp } from '../support/app'
import { describeOnBackends, testS3Settings, testSchema, unanalyzedTables } from '../support/backends'
import { tempDirs } from '../support/tmp'
import { capturedIo } from '../support/cli'

const dirs = tempDirs('copy-store')
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
  dirs.cleanup()
})

const io = () => capturedIo()

describeOnBackends('copy-store', () => {
  test('moves every row, archive and the signing key; the copy serves the same registry and goes on', async () => {
    // A registry in a data directory, as serve keeps it.
    const dir = dirs.make()
    await Bun.write(join(dir, 'signing.key'), 'the-old-key\n')
    const sqlite = await openStore(join(dir, 'registry.db'))
    const old: TestApp = await makeTestApp({ store: sqlite, dir: join(dir, 'app'), local: true })
    old.deps.blobs = createDiskBlobStore(dir)
    closers.push(() => sqlite.destroy())
    const { token, pat } = await aliceWithPublisher(old)
    const zip = makeZip(samplePack([{ name: 'moved.txt', data: 'moved' }]))
    await publishActive(old, { pat, node: 'pack', version: '1.0.0', bytes: zip })
    expect((await old.call('POST', '/nodes/pack/reviews?star=4')).status).toBe(200)
    const nodeBefore = (await old.call('GET', '/nodes/pack')).body
    const feedBefore = await feedPosition(sqlite)
    const auditBefore = await sqlite.selectFrom('audit_log').select('id').orderBy('id').execute()

    const schema = await testSchema()
    closers.push(schema.drop)
    const settings = testS3Settings()
    const run = io()
    const code = await runCli(
      [
        'copy-store',
        '--data',
        dir,
        '--database',
        schema.url,
        '--storage',
        settings.url,
        '--s3-endpoint',
        settings.endpoint!,
        '--s3-access-key-id',
        settings.accessKeyId!,
        '--s3-secret-access-key',
        settings.secretAccessKey!,
      ],
      run.io,
    )
    expect({ code, err: run.err }).toEqual({ code: 0, err: [] })
    expect(run.out[0]).toMatch(/^copied [\d,]+ rows in \d+ tables and 1 archive into postgres:\/\//)

    // The same registry on the new backends.
    const pg = await openStore(schema.url)
    closers.push(() => pg.destroy())
    expect(await feedPosition(pg)).toEqual(feedBefore)
    expect(await pg.selectFrom('registry_secrets').select('value').where('name', '=', 'url-signing').execute()).toEqual([
      { value: 'the-old-key' },
    ])
    // With the planner's statistics: no minute of guessed plans on a new copy.
    expect(await unanalyzedTables(pg, ['nodes', 'node_versions', 'changes'])).toEqual([])
    const moved = await makeTestApp({ store: pg })
    const { createS3BlobStore } = await import('../../src/blobs/s3')
    moved.deps.blobs = createS3BlobStore(settings, createDiskBlobStore(dirs.make()))
    closers.push(() => moved.cleanup())
    expect((await moved.call('GET', '/nodes/pack')).body).toEqual(nodeBefore)
    const download = await moved.app.request('/archives/acme/pack/1.0.0/node.zip')
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(zip)
    expect((await moved.call('GET', '/users', { token })).body.id).toBe('alice')

    // And goes on: the next write takes the next serial and the next audit id.
    expect((await publish(moved, { pat, node: 'pack', version: '1.1.0' })).status).toBe(201)
    expect((await feedPosition(pg)).lastSerial).toBeGreaterThan(feedBefore.lastSerial)
    const audit = await pg.selectFrom('audit_log').select('id').orderBy('id').execute()
    expect(audit.slice(0, auditBefore.length)).toEqual(auditBefore)

    // A second copy into the same database is refused, and changes nothing.
    const again = io()
    expect(await runCli(['copy-store', '--data', dir, '--database', schema.url], again.io)).toBe(1)
    expect(again.err).toEqual(['the target database already holds a registry: copy only into a new, empty one'])
  })
})
